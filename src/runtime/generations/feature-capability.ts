import type { ToolDefinition } from '../../features/define-tool.js'
import type { ToolAnnotations } from '../../seams/types.js'
import { toJsonSchema, toolFingerprint } from '../../features/schema.js'
// Type only: the capability shape is CapabilityIngress's; this file computes one part of it.
import type { ToolCapability } from '../../seams/capabilities.js'
import type { ToolSlot } from './generation.js'

/**
 * What one definition object contributes, read from it once. A definition is frozen, so these
 * references never change; the lists and annotations they point at may (they are the plugin's own),
 * so those are compared by content on every use.
 */
interface DefinitionEntry {
  readonly hidden: boolean
  readonly permissions: readonly string[] | undefined
  readonly platforms: readonly string[] | undefined
  readonly scopes: readonly string[] | undefined
  readonly annotations: ToolDefinition['annotations']
  /** Usually one: the definition added under one name. A definition added under several names has one per place. */
  readonly templates: ToolCapability[]
}

/**
 * The capability of a feature tool minus its binding, kept per definition object and place (name,
 * source, owner): a tool whose file or `addTool` definition did not change is the same capability
 * object from one generation to the next (its JSON Schema and fingerprint included), so a publish
 * only pays for what changed.
 */
const entries = new WeakMap<ToolDefinition, DefinitionEntry>()
const definitions = new WeakMap<ToolCapability, ToolDefinition>()

/** The definition a feature tool's capability was made from (the same in every generation that offers it). */
export function definitionOf(capability: ToolCapability): ToolDefinition | undefined {
  return definitions.get(capability)
}

/** The slot's capability, or nothing for a hidden tool. */
export function featureTemplate(slot: ToolSlot): ToolCapability | undefined {
  const def = slot.definition
  let entry = entries.get(def)
  if (entry === undefined) {
    // Own properties only, read once: a definition comes from `defineTool` (a frozen spread of its spec).
    entry = {
      hidden: own(def, 'hidden') === true,
      permissions: own(def, 'permissions'),
      platforms: own(def, 'platforms'),
      scopes: own(def, 'scopes'),
      annotations: own(def, 'annotations'),
      templates: [],
    }
    entries.set(def, entry)
  }
  if (entry.hidden) return undefined
  const templates = entry.templates
  for (let index = 0; index < templates.length; index += 1) {
    const known = templates[index]!
    if (known.name === slot.name && known.source === slot.source && known.owner === slot.owner) {
      if (sameRestrictions(known, entry)) return known
      templates.splice(index, 1)
      break
    }
  }
  const parameters = toJsonSchema(def.input)
  const template: ToolCapability = Object.freeze({
    name: slot.name,
    description: def.description,
    parameters,
    outputSchema: def.output === undefined ? undefined : toJsonSchema(def.output),
    source: slot.source,
    owner: slot.owner,
    kind: 'feature',
    approval: def.approval ?? 'on-risk',
    permissions: Object.freeze([...(entry.permissions ?? [])]),
    platforms: Object.freeze([...(entry.platforms ?? [])]),
    scopes: Object.freeze([...(entry.scopes ?? [])]) as ToolCapability['scopes'],
    annotations: entry.annotations ? Object.freeze({ ...entry.annotations }) : undefined,
    timeoutMs: def.timeoutMs,
    ...(def.maxTimeoutMs === undefined ? {} : { maxTimeoutMs: def.maxTimeoutMs }),
    ...(def.idempotencyKey === undefined ? {} : { idempotencyScope: def.idempotencyScope ?? 'session' }),
    ...(def.idempotencyKey !== undefined && def.onUnknown === 'rerun' ? { onUnknown: 'rerun' as const } : {}),
    ...(def.clientCapabilities?.length ? { clientCapabilities: Object.freeze([...def.clientCapabilities]) } : {}),
    ...(def.task ? { task: def.task } : {}),
    ...(def.task && def.taskStarts === 'after-input' ? { taskStarts: 'after-input' as const } : {}),
    fingerprint: toolFingerprint(slot.name, def.description, parameters),
  })
  templates.push(template)
  definitions.set(template, def)
  return template
}

/**
 * An absent optional field without a lookup through the prototype chain: V8 answers a missing
 * property of a frozen object slowly (microseconds each, measured), and a publish asks 10,000 of them.
 */
function own<K extends keyof ToolDefinition>(def: ToolDefinition, key: K): ToolDefinition[K] | undefined {
  return Object.hasOwn(def, key) ? def[key] : undefined
}

function sameRestrictions(template: ToolCapability, entry: DefinitionEntry): boolean {
  const a = entry.annotations
  const b = template.annotations
  return (
    sameList(template.permissions, entry.permissions) &&
    sameList(template.platforms, entry.platforms) &&
    sameList(template.scopes, entry.scopes) &&
    (a === undefined ? b === undefined : b !== undefined && sameAnnotations(a, b))
  )
}

function sameAnnotations(a: ToolAnnotations, b: ToolAnnotations): boolean {
  return (
    a.readOnlyHint === b.readOnlyHint &&
    a.destructiveHint === b.destructiveHint &&
    a.idempotentHint === b.idempotentHint &&
    a.openWorldHint === b.openWorldHint &&
    a.title === b.title
  )
}

function sameList(kept: readonly string[], given: readonly string[] | undefined): boolean {
  if (given === undefined) return kept.length === 0
  if (kept.length !== given.length) return false
  for (let index = 0; index < kept.length; index += 1) if (kept[index] !== given[index]) return false
  return true
}

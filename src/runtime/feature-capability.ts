import type { ToolDefinition } from '../features/define-tool.js'
import { toJsonSchema, toolFingerprint } from '../features/schema.js'
// Type only: the capability shape is CapabilityIngress's; this file computes one part of it.
import type { ToolCapability } from './capability-ingress.js'
import type { ToolSlot } from './generation.js'

/**
 * The capability of a feature tool minus its binding, kept per definition object and place (name,
 * source, owner): a tool whose file or `addTool` definition did not change keeps its exported JSON
 * Schema and fingerprint from one generation to the next, so a publish only pays for what changed.
 * A definition's lists are checked against the template (they are the plugin's own arrays).
 * Usually one template per definition; a definition added under several names has one per place.
 */
const featureTemplates = new WeakMap<ToolDefinition, ToolCapability[]>()

export function featureTemplate(slot: ToolSlot): ToolCapability {
  const def = slot.definition
  let templates = featureTemplates.get(def)
  if (templates === undefined) {
    templates = []
    featureTemplates.set(def, templates)
  }
  for (let index = 0; index < templates.length; index += 1) {
    const known = templates[index]!
    if (known.name === slot.name && known.source === slot.source && known.owner === slot.owner) {
      if (sameRestrictions(known, def)) return known
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
    permissions: Object.freeze([...(def.permissions ?? [])]),
    platforms: Object.freeze([...(def.platforms ?? [])]),
    scopes: Object.freeze([...(def.scopes ?? [])]),
    annotations: def.annotations ? Object.freeze({ ...def.annotations }) : undefined,
    timeoutMs: def.timeoutMs,
    ...(def.idempotencyKey === undefined ? {} : { idempotencyScope: def.idempotencyScope ?? 'session' }),
    fingerprint: toolFingerprint(slot.name, def.description, parameters),
  })
  templates.push(template)
  return template
}

function sameRestrictions(template: ToolCapability, def: ToolDefinition): boolean {
  const a = def.annotations
  const b = template.annotations
  return (
    sameList(template.permissions, def.permissions) &&
    sameList(template.platforms, def.platforms) &&
    sameList(template.scopes, def.scopes) &&
    (a === undefined ? b === undefined : b !== undefined && a.readOnlyHint === b.readOnlyHint && a.destructiveHint === b.destructiveHint)
  )
}

function sameList(kept: readonly string[], given: readonly string[] | undefined): boolean {
  if (given === undefined) return kept.length === 0
  if (kept.length !== given.length) return false
  for (let index = 0; index < kept.length; index += 1) if (kept[index] !== given[index]) return false
  return true
}

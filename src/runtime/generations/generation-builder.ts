import { performance } from 'node:perf_hooks'
import { SeamError, messageOf } from '../../errors.js'
import type { ToolDefinition } from '../../features/define-tool.js'
import type { Diagnostic } from '../../features/diagnostic.js'
import { isChangeNotifying } from '../../seams/types.js'
import type { CapabilityIngress } from './capability-ingress.js'
import { type ToolBinding, toolsByName } from './tool-binding.js'
import type { ToolCapability } from '../../seams/capabilities.js'
import { definitionOf } from './feature-capability.js'
import { Generation, type ResourceSlot, type SkillSlot, type ToolSlot } from './generation.js'
import { addedResources, versionKey } from './resource-slots.js'
import type { GenerationDiff, ReloadProbe } from './instrumentation.js'
import type { Logger } from '../base/logger.js'
import { type FolderPluginLoader, PluginInstance } from '../plugins/plugin-instance.js'
import type { PluginDefinition } from '../../features/plugin-types.js'
import type { PipelineHooks } from '../../seams/calls.js'

/** File-backed features of a plugin tree (tool and skill files), loaded by the folder source. */
export interface FeatureFiles {
  readonly tools: readonly ToolSlot[]
  readonly skills: readonly SkillSlot[]
  /** Files under `agent/resources/`. */
  readonly resources?: readonly ResourceSlot[]
  readonly diagnostics: readonly Diagnostic[]
  /** Releases what this load holds (module instances, source maps) once the generation is disposed. */
  readonly release?: () => void
}

export interface BuildInput {
  readonly number: number
  /** The plugin definition to mount (re-running every setup), or an already mounted tree to reuse. */
  readonly plugin: PluginDefinition | PluginInstance
  readonly baseDir?: string
  readonly hooks?: Partial<PipelineHooks>
  readonly ingress: CapabilityIngress
  readonly logger: Logger
  readonly files?: (root: PluginInstance) => Promise<FeatureFiles>
  /** Loads the `plugin.ts` of a child's declared folder. */
  readonly folderPlugin?: FolderPluginLoader
  /** Called with each change-notifying seam provider of the new generation (MCP list_changed). */
  readonly watchProvider?: (provider: { onDidChange(listener: () => void): () => void }) => () => void
  /** Told how long setup and projection took. */
  readonly probe?: ReloadProbe
}

export type BuildResult =
  | { readonly ok: true; readonly generation: Generation }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[]; readonly error: SeamError }

/**
 * Builds a candidate generation aside: mount (or reuse) the plugin tree, load feature files,
 * project every owner with seam providers and reject name clashes. A failed candidate is disposed
 * and never seen by a turn.
 */
export async function buildGeneration(input: BuildInput): Promise<BuildResult> {
  let root: PluginInstance
  if (input.plugin instanceof PluginInstance) {
    root = input.plugin
  } else {
    const started = performance.now()
    try {
      root = await PluginInstance.mount(input.plugin, { generation: input.number, baseDir: input.baseDir, logger: input.logger, folderPlugin: input.folderPlugin })
    } catch (error) {
      return failed([diagnosticOf(error, 'SETUP_FAILED')], error)
    } finally {
      input.probe?.phase('setup', started, performance.now())
    }
  }
  const files = input.files ? await input.files(root).catch((error: unknown) => ({ tools: [], skills: [], diagnostics: [diagnosticOf(error, 'LOAD_FAILED')] }) as FeatureFiles) : undefined
  const unsubscribe: (() => void)[] = []
  const generation = new Generation({
    number: input.number,
    root,
    // Made for this generation alone, so frozen as it is rather than copied again.
    tools: Object.freeze(files && files.tools.length > 0 ? [...programmaticTools(root), ...files.tools] : programmaticTools(root)),
    skills: [...programmaticSkills(root), ...(files?.skills ?? [])],
    resources: [...addedResources(root), ...(files?.resources ?? [])],
    diagnostics: [],
    hooks: input.hooks,
    logger: input.logger,
    onDispose: () => {
      // Every unsubscribe runs and the files are released even if one throws; the first error is reported.
      const errors: unknown[] = []
      for (const u of unsubscribe) {
        try {
          u()
        } catch (error) {
          errors.push(error)
        }
      }
      files?.release?.()
      if (errors.length > 0) throw errors[0]
    },
  })
  const errors = files?.diagnostics ?? []
  if (errors.length > 0) {
    await generation.fail().catch(() => {})
    return failed(errors, new SeamError('RELOAD_FAILED', errors.map((d) => d.message).join('\n')))
  }
  const projecting = performance.now()
  try {
    for (const owner of generation.owners) await input.ingress.project(generation, owner)
  } catch (error) {
    await generation.fail().catch(() => {})
    return failed([diagnosticOf(error, 'DUPLICATE_CAPABILITY')], error)
  } finally {
    input.probe?.phase('project', projecting, performance.now())
  }
  if (input.watchProvider && generation.seam) {
    for (const scope of ['global', ...generation.seam.tools.scopes()]) {
      for (const provider of generation.seam.tools.getFor(scope)) {
        if (isChangeNotifying(provider)) unsubscribe.push(input.watchProvider(provider))
      }
    }
  }
  return { ok: true, generation }
}

function failed(diagnostics: readonly Diagnostic[], error: unknown): BuildResult {
  const seamError = SeamError.is(error) ? error : new SeamError('RELOAD_FAILED', messageOf(error), { cause: error })
  return { ok: false, diagnostics, error: seamError }
}

export function diagnosticOf(error: unknown, fallback: Diagnostic['code']): Diagnostic {
  const details = SeamError.is(error) ? (error.details ?? {}) : {}
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined)
  return {
    code: SeamError.is(error) ? error.code : fallback,
    message: messageOf(error),
    file: str(details.file),
    line: num(details.line),
    column: num(details.column),
    frame: str(details.frame),
    source: str(details.owner),
  }
}

function programmaticTools(root: PluginInstance): ToolSlot[] {
  const slots: ToolSlot[] = []
  for (const plugin of root.walk()) {
    // One source string per plugin: the capability templates of unchanged tools compare it by value.
    const source = `addTool(${plugin.owner})`
    // forEach: a Map's iterator makes a [key, value] array per entry, 10,000 of them per publish.
    plugin.tools.forEach((definition, local) => {
      slots.push(new AddedTool(plugin, local, source, definition))
    })
  }
  return slots
}

/** A tool slot of `addTool`; its id is spelled out only when asked (comparing builds), not for every tool of every publish. */
class AddedTool implements ToolSlot {
  readonly owner: string
  readonly name: string
  readonly #local: string

  constructor(
    readonly plugin: PluginInstance,
    local: string,
    readonly source: string,
    readonly definition: ToolDefinition,
  ) {
    this.owner = plugin.owner
    this.name = plugin.qualify(local)
    this.#local = local
  }

  get id(): string {
    return `${this.owner}#tool:${this.#local}`
  }
}

function programmaticSkills(root: PluginInstance): SkillSlot[] {
  const slots: SkillSlot[] = []
  for (const plugin of root.walk()) {
    for (const [local, definition] of plugin.skills) {
      slots.push({ id: `${plugin.owner}#skill:${local}`, owner: plugin.owner, name: plugin.qualify(local), source: `addSkill(${plugin.owner})`, definition })
    }
  }
  return slots
}

/** Added, changed and removed tools and skills between two generations, as `owner` (default the root) sees them. */
export async function diffGenerations(ingress: CapabilityIngress, previous: Generation | undefined, next: Generation, owner = 'root'): Promise<GenerationDiff> {
  const before = previous ? await ingress.project(previous, owner) : undefined
  const after = await ingress.project(next, owner)
  const skillKey = (s: (typeof after.skills)[number]) => `${s.description}|${s.instructions}|${s.tools.join(',')}|${s.always}|${s.source}`
  return {
    tools: diffTools(before && previous ? toolsByName(before.base, previous) : new Map(), toolsByName(after.base, next)),
    skills: diff(new Map((before?.skills ?? []).map((s) => [s.name, skillKey(s)])), new Map(after.skills.map((s) => [s.name, skillKey(s)]))),
    resources: diff(resourceVersions(previous, owner), resourceVersions(next, owner)),
  }
}

/** The resources `owner` sees, by URI, each with a key that changes when what it reads changes. */
function resourceVersions(generation: Generation | undefined, owner: string): Map<string, string> {
  const keys = new Map<string, string>()
  for (const r of generation?.resources ?? []) {
    if (!ownsFor(r.owner, owner)) continue
    keys.set(r.uri, `${versionKey(r)}|${r.source}`)
  }
  return keys
}

function sameResources(a: readonly ResourceSlot[], b: readonly ResourceSlot[]): boolean {
  if (a.length !== b.length) return false
  const before = new Map(a.map((slot) => [slot.id, slot.version]))
  return b.every((slot) => before.get(slot.id) === slot.version)
}

function ownsFor(slotOwner: string, owner: string): boolean {
  return slotOwner === owner || owner.startsWith(`${slotOwner}/`) || slotOwner.startsWith(`${owner}/`)
}

/**
 * Tools by name, compared by identity first: a feature tool whose definition and place did not
 * change is the same capability object in both generations, so a publish compares only what changed.
 */
function diffTools(before: ReadonlyMap<string, ToolBinding>, after: ReadonlyMap<string, ToolBinding>) {
  const added: string[] = []
  const changed: string[] = []
  const removed: string[] = []
  after.forEach(({ capability }, name) => {
    const earlier = before.get(name)?.capability
    if (earlier === undefined) added.push(name)
    else if (earlier !== capability && toolKey(earlier) !== toolKey(capability)) changed.push(name)
  })
  // Nothing added and as many tools as before: every earlier name is still there.
  if (added.length > 0 || before.size !== after.size) {
    for (const name of before.keys()) if (!after.has(name)) removed.push(name)
  }
  return { added, changed, removed }
}

/**
 * What makes a tool another tool: its fingerprint, source, approval and (feature tools) definition
 * object, whose version covers everything else it declares; for a seam tool, the rest of its
 * contract: annotations, output schema and concurrency declaration (served to clients, or used by
 * the pipeline).
 */
function toolKey(t: ToolCapability): string {
  const definition = definitionOf(t)
  const base = `${t.fingerprint}|${t.source}|${t.approval}|${definition === undefined ? '' : versionOf(definition)}`
  if (t.kind !== 'seam') return base
  return `${base}|${t.concurrencySafe === true}|${t.annotations ? JSON.stringify(t.annotations) : ''}|${t.outputSchema ? JSON.stringify(t.outputSchema) : ''}`
}

const versions = new WeakMap<object, number>()
let versionSeq = 0

function versionOf(definition: object): number {
  let v = versions.get(definition)
  if (v === undefined) {
    v = ++versionSeq
    versions.set(definition, v)
  }
  return v
}

function diff(before: Map<string, string>, after: Map<string, string>) {
  const added: string[] = []
  const changed: string[] = []
  const removed: string[] = []
  for (const [name, key] of after) {
    if (!before.has(name)) added.push(name)
    else if (before.get(name) !== key) changed.push(name)
  }
  for (const name of before.keys()) if (!after.has(name)) removed.push(name)
  return { added, changed, removed }
}

/**
 * Whether `next` offers exactly what `previous` does: the same plugin tree, the same tool and skill
 * definitions (a file that loaded again has a new one), no diagnostics of its own and, as the root
 * sees it, the same projection (remote tools included).
 */
export function sameFeatures(previous: Generation, next: Generation, diff: GenerationDiff): boolean {
  const same = <S extends { readonly id: string; readonly definition: object }>(a: readonly S[], b: readonly S[]) => {
    if (a.length !== b.length) return false
    const before = new Map(a.map((slot) => [slot.id, slot.definition]))
    return b.every((slot) => before.get(slot.id) === slot.definition)
  }
  const empty = (d: GenerationDiff['tools']) => d.added.length + d.changed.length + d.removed.length === 0
  return (
    previous.root === next.root &&
    same(previous.tools, next.tools) &&
    same(previous.skills, next.skills) &&
    sameResources(previous.resources, next.resources) &&
    previous.diagnostics.length === 0 &&
    next.diagnostics.length === 0 &&
    empty(diff.tools) &&
    empty(diff.skills) &&
    (diff.resources === undefined || empty(diff.resources))
  )
}

import { SeamError, messageOf } from '../../errors.js'
import { untilDue } from '../base/abort.js'
import type { Diagnostic } from '../../features/diagnostic.js'
import type { OriginScope, ToolSchema, ToolService } from '../../seams/types.js'
import type { PermissionHost } from '../../seams/approval.js'
import { featureTemplate } from './feature-capability.js'
import { LOAD_SKILL, loadSkillTool } from './load-skill.js'
import { seamTool } from './seam-capability.js'
import type { SkillFile } from '../../features/skill-file.js'
import type { Generation, SkillSlot, ToolSlot } from './generation.js'
import type { TurnEnvelope } from '../../seams/types.js'
import { planOf, type ToolPlan } from './tool-plan.js'

import type { AgentCapabilities, ResourceCapability, SkillCapability, ToolCapability } from '../../seams/capabilities.js'
import { bindResources, type ResourceBinding } from './resource-read.js'
import { READ_RESOURCE, readResourceTool } from './read-resource.js'

/**
 * How a capability executes in one generation; kept off the public object so it cannot be swapped.
 * A feature tool that did not change is the same capability object in every generation (see
 * `featureTemplate`), so its binding belongs to the generation, not to the object.
 */
export type ToolBinding =
  | { readonly kind: 'feature'; readonly capability: ToolCapability; readonly generation: Generation; readonly slot: ToolSlot; readonly plan: ToolPlan }
  | { readonly kind: 'seam'; readonly capability: ToolCapability; readonly generation: Generation; readonly service: ToolService; readonly scope: string }

interface Projection {
  readonly tools: readonly ToolCapability[]
  readonly skills: readonly SkillCapability[]
  readonly base: AgentCapabilities
  /** Tools restricted by platform, origin scope or permission: only these differ between turns. */
  readonly gated: readonly ToolCapability[]
  /** The distinct permissions of `gated`, each asked once per turn. */
  readonly permissions: readonly string[]
  /** Filtered views by what a turn may see (platform, scope, granted permissions); bounded. */
  readonly views: Map<string, AgentCapabilities>
}

/** Distinct filtered views kept per (generation, owner); past this the oldest is rebuilt on demand. */
const MAX_VIEWS = 64

/** Per generation and owner: the projection once it is made. */
const settled = new WeakMap<Generation, Map<string, Projection>>()
/** Per generation and owner: the bound tools of the owner's projection, by name. */
const projected = new WeakMap<Generation, Map<string, ReadonlyMap<string, ToolBinding>>>()
const byName = new WeakMap<AgentCapabilities, ReadonlyMap<string, ToolBinding>>()

/**
 * The tools of `capabilities` that `generation` binds, by name, each with its binding. Kept per
 * capabilities object (a projection and each of its views are shared by every turn that sees
 * them), so a turn costs no per-tool work; a projection's own map is the one made while projecting.
 */
export function toolsByName(capabilities: AgentCapabilities, generation: Generation): ReadonlyMap<string, ToolBinding> {
  let tools = byName.get(capabilities)
  if (tools === undefined) {
    const own = projected.get(generation)?.get(capabilities.owner)
    const map = new Map<string, ToolBinding>()
    for (const tool of capabilities.tools) {
      const binding = own?.get(tool.name)
      if (binding?.capability === tool) map.set(tool.name, binding)
    }
    tools = map
    byName.set(capabilities, tools)
  }
  return tools
}

/**
 * Projects Feature and Seam capabilities into one frozen snapshot per (generation, owner), then
 * filters it per turn. Provider `schema()`/`catalog()`/`describe()` run once per generation and
 * owner; a provider that throws contributes nothing and leaves a diagnostic on the generation.
 */
export class CapabilityIngress {
  readonly #permissions: PermissionHost | undefined
  readonly #permissionTimeoutMs: number | undefined

  /** `permissionTimeoutMs` bounds each permission check of `read` (a hanging host hides the tool). */
  constructor(options: { permissions?: PermissionHost; permissionTimeoutMs?: number } = {}) {
    this.#permissions = options.permissions
    this.#permissionTimeoutMs = options.permissionTimeoutMs
  }

  /**
   * What `owner` sees in `generation`, filtered for `turn`. An owner the generation does not know
   * (not a plugin of its tree, nor a seam scope) is refused with `INVALID_TURN`.
   */
  async read(generation: Generation, owner = 'root', turn?: TurnEnvelope): Promise<AgentCapabilities> {
    if (!generation.owners.has(owner)) {
      throw new SeamError('INVALID_TURN', `invalid turn: owner ${JSON.stringify(owner)} is not a plugin of generation ${generation.number}`, {
        hint: `owners: ${[...generation.owners].sort().join(', ')}`,
      })
    }
    // A projection already made is read as it is: no await, so a turn costs no microtask hop here.
    const projection = settled.get(generation)?.get(owner) ?? (await this.project(generation, owner))
    // A catalog without restricted tools looks the same to every turn.
    if (projection.gated.length === 0) return projection.base
    const granted = await this.#granted(projection.permissions, turn)
    const platform = turn?.origin?.platform
    const scope = turn?.origin?.scope
    const key = `${platform ?? ''}\u0000${scope ?? ''}\u0000${granted.join('')}`
    let view = projection.views.get(key)
    if (view === undefined) {
      const hidden = new Set<ToolCapability>()
      for (const tool of projection.gated) if (!visibleWith(tool, platform, scope, projection.permissions, granted)) hidden.add(tool)
      view = hidden.size === 0 ? projection.base : Object.freeze({ ...projection.base, tools: Object.freeze(projection.tools.filter((tool) => !hidden.has(tool))) })
      if (projection.views.size >= MAX_VIEWS) projection.views.delete(projection.views.keys().next().value!)
      projection.views.set(key, view)
    }
    return view
  }

  /**
   * Asks the permission host about each permission once, all at once: `1` granted, `0` not (a
   * check that throws, rejects, times out or answers anything but `true` is not a grant). Without a
   * turn or a host nothing is granted.
   */
  async #granted(permissions: readonly string[], turn: TurnEnvelope | undefined): Promise<string[]> {
    const host = this.#permissions
    if (permissions.length === 0 || !turn || !host) return permissions.map(() => '0')
    const timeoutMs = this.#permissionTimeoutMs
    const answers = permissions.map((permission) => {
      try {
        const answer = host.check(permission, turn.principal)
        // A check that does not answer in time (or outlasts the turn's abort) is not a grant.
        return answer instanceof Promise && timeoutMs !== undefined ? untilDue(answer, turn.signal, timeoutMs) : answer
      } catch {
        return false
      }
    })
    const settled = answers.some((a) => a !== true && a !== false) ? await Promise.allSettled(answers) : undefined
    return answers.map((answer, i) => {
      const value = settled ? (settled[i]!.status === 'fulfilled' ? (settled[i] as PromiseFulfilledResult<unknown>).value : false) : answer
      return value === true ? '1' : '0'
    })
  }

  /** The owner's unfiltered projection; rejects with `DUPLICATE_CAPABILITY` on a name clash. */
  project(generation: Generation, owner = 'root'): Promise<Projection> {
    let projection = generation.projections.get(owner) as Promise<Projection> | undefined
    if (!projection) {
      projection = projectOwner(generation, owner)
      generation.projections.set(owner, projection)
    }
    return projection
  }

  /**
   * Platforms, scopes and permissions; without a turn, restricted tools are not visible. With
   * `timeoutMs`, a permission check that does not answer in time (or outlasts the turn's abort)
   * counts as not permitted (fail closed).
   */
  async isVisible(tool: ToolCapability, turn: TurnEnvelope | undefined, timeoutMs?: number): Promise<boolean> {
    if (tool.platforms.length > 0 && !tool.platforms.includes(turn?.origin?.platform ?? '')) return false
    if (tool.scopes.length > 0 && !tool.scopes.includes(turn?.origin?.scope as OriginScope)) return false
    if (tool.permissions.length === 0) return true
    if (!turn || !this.#permissions) return false
    try {
      for (const permission of tool.permissions) {
        const answer = this.#permissions.check(permission, turn.principal)
        if ((answer instanceof Promise && timeoutMs !== undefined ? await untilDue(answer, turn.signal, timeoutMs) : await answer) !== true) return false
      }
      return true
    } catch {
      return false
    }
  }
}

/** `isVisible` with the turn's permissions already asked: `granted[i]` answers `permissions[i]`. */
function visibleWith(tool: ToolCapability, platform: string | undefined, scope: OriginScope | undefined, permissions: readonly string[], granted: readonly string[]): boolean {
  if (tool.platforms.length > 0 && !tool.platforms.includes(platform ?? '')) return false
  if (tool.scopes.length > 0 && !tool.scopes.includes(scope as OriginScope)) return false
  return tool.permissions.every((permission) => granted[permissions.indexOf(permission)] === '1')
}

function restricted(tool: ToolCapability): boolean {
  return tool.platforms.length > 0 || tool.scopes.length > 0 || tool.permissions.length > 0
}

function ownsFor(slotOwner: string, owner: string): boolean {
  return slotOwner === owner || owner.startsWith(`${slotOwner}/`) || slotOwner.startsWith(`${owner}/`)
}

async function projectOwner(generation: Generation, owner: string): Promise<Projection> {
  const tools: ToolCapability[] = []
  const skills: SkillCapability[] = []
  // The bound tools by name: claims names, and is the map every turn of the base catalog looks calls up in.
  const named = new Map<string, ToolBinding>()
  const skillSources = new Map<string, string>()
  const claimTool = (binding: ToolBinding) => {
    const { capability } = binding
    const earlier = named.get(capability.name)
    if (earlier !== undefined) duplicate('tool', capability.name, earlier.capability.source, capability.source)
    named.set(capability.name, binding)
    tools.push(capability)
  }
  const claim = (sources: Map<string, string>, kind: string, name: string, source: string) => {
    const earlier = sources.get(name)
    if (earlier !== undefined) duplicate(kind, name, earlier, source)
    sources.set(name, source)
  }
  // Every owner projects the global providers: a provider that is down is reported once, not per owner.
  const diagnose = (d: Diagnostic) => {
    if (!generation.diagnostics.some((e) => e.code === d.code && e.source === d.source && e.message === d.message)) generation.diagnostics.push(d)
  }

  for (const slot of generation.tools) {
    if (!ownsFor(slot.owner, owner)) continue
    // An unchanged tool is the object the last generation had; only its binding is this generation's.
    const capability = featureTemplate(slot)
    if (capability !== undefined) claimTool({ kind: 'feature', capability, generation, slot, plan: planOf(slot.definition) })
  }

  for (const service of generation.seam?.tools.getFor(owner) ?? []) {
    let schemas: ToolSchema[]
    try {
      schemas = await service.schema(owner)
      if (!Array.isArray(schemas)) throw new Error('schema() did not return an array')
    } catch (error) {
      diagnose({ code: 'PROVIDER_UNAVAILABLE', source: `seam:${service.id}`, message: `tool service "${service.id}" contributed no tools: ${messageOf(error)}` })
      continue
    }
    for (const schema of schemas) {
      let capability: ToolCapability | undefined
      try {
        capability = seamTool(schema, service, owner, diagnose)
      } catch (error) {
        // One malformed remote tool (a schema nested too deep to walk) drops that tool, not the projection.
        diagnose({ code: 'INVALID_TOOL', source: `seam:${service.id}`, message: `a tool from "${service.id}" was skipped: ${messageOf(error)}` })
        continue
      }
      if (!capability) continue
      claimTool({ kind: 'seam', capability: Object.freeze(capability), generation, service, scope: owner })
    }
  }

  for (const slot of generation.skills) {
    if (!ownsFor(slot.owner, owner)) continue
    claim(skillSources, 'skill', slot.name, slot.source)
    const d = slot.definition
    skills.push(
      Object.freeze({
        name: slot.name,
        description: d.description,
        instructions: d.instructions,
        source: slot.source,
        owner: slot.owner,
        tools: Object.freeze([...(d.tools ?? [])]),
        always: d.always ?? false,
        ...(d.arguments ? { arguments: Object.freeze(d.arguments.map((a) => Object.freeze({ ...a, ...(a.ask ? { ask: Object.freeze({ ...a.ask }) } : {}), ...(a.values ? { values: Object.freeze([...a.values]) } : {}) }))) } : {}),
        ...(d.resources ? { resources: Object.freeze([...d.resources]) } : {}),
      }),
    )
    // Checked in the skill's own owner's projection, the one its plugin's turns see.
    if (owner === slot.owner && d.tools !== undefined && d.tools.length > 0) warnUnknownTools(slot, named, diagnose)
  }

  for (const service of generation.seam?.skills.getFor(owner) ?? []) {
    try {
      const catalog = await service.catalog(owner)
      const entries = await Promise.all(
        catalog
          .filter((e) => typeof e?.name === 'string' && e.name.trim() !== '')
          .map(async (e) => ({ name: e.name.trim(), description: String(e.description ?? ''), instructions: String(await service.describe(owner, e.name)) })),
      )
      for (const e of entries) {
        const source = `seam:${service.id}`
        claim(skillSources, 'skill', e.name, source)
        skills.push(Object.freeze({ ...e, source, owner, tools: Object.freeze([]), always: false }))
      }
    } catch (error) {
      if (SeamError.is(error, 'DUPLICATE_CAPABILITY')) throw error
      diagnose({ code: 'PROVIDER_UNAVAILABLE', source: `seam:${service.id}`, message: `skill service "${service.id}" contributed no skills: ${messageOf(error)}` })
    }
  }

  const resources = await projectResources(generation, owner, diagnose)

  // Progressive disclosure: a skill whose instructions the prompt leaves out is loaded by name.
  if (skills.some((skill) => !skill.always)) {
    const taken = named.get(LOAD_SKILL)
    if (taken === undefined) {
      const { capability, service } = loadSkillTool(skills, owner)
      claimTool({ kind: 'seam', capability, generation, service, scope: owner })
    } else {
      const from = taken.capability.source
      diagnose({ code: 'DUPLICATE_CAPABILITY', source: from, message: `the tool "${LOAD_SKILL}" from ${from} is offered instead of the built-in tool that loads a skill's instructions` })
    }
  }

  // Resources are read through one built-in tool, offered only when there is something to read.
  if (resources.length > 0) {
    const taken = named.get(READ_RESOURCE)
    if (taken === undefined) {
      const { capability, service } = readResourceTool(resources.map((r) => r.capability), generation, owner)
      claimTool({ kind: 'seam', capability, generation, service, scope: owner })
    } else {
      const from = taken.capability.source
      diagnose({ code: 'DUPLICATE_CAPABILITY', source: from, message: `the tool "${READ_RESOURCE}" from ${from} is offered instead of the built-in tool that reads a resource` })
    }
  }
  bindResources(generation, owner, resources)

  const frozenTools = Object.freeze(tools)
  const frozenSkills = Object.freeze(skills)
  const gated = frozenTools.filter(restricted)
  const frozenResources = Object.freeze(resources.map((r) => r.capability))
  const base: AgentCapabilities = Object.freeze({ generation: generation.number, owner, tools: frozenTools, skills: frozenSkills, resources: frozenResources })
  byName.set(base, named)
  const projection: Projection = {
    tools: frozenTools,
    skills: frozenSkills,
    base,
    gated,
    permissions: [...new Set(gated.flatMap((tool) => tool.permissions))].sort(),
    views: new Map(),
  }
  perOwner(projected, generation).set(owner, named)
  perOwner(settled, generation).set(owner, projection)
  return projection
}

/**
 * The resources and templates `owner` sees: its plugins' files and `addResource`s, then each
 * resource service's list and templates. A URI provided twice rejects with `DUPLICATE_CAPABILITY`;
 * a service that throws contributes nothing and leaves a diagnostic.
 */
async function projectResources(generation: Generation, owner: string, diagnose: (d: Diagnostic) => void): Promise<ResourceBinding[]> {
  const bindings: ResourceBinding[] = []
  const sources = new Map<string, string>()
  const claim = (capability: ResourceCapability, read: ResourceBinding['read'], complete?: ResourceBinding['complete']) => {
    const earlier = sources.get(capability.uri)
    if (earlier !== undefined) duplicate(capability.template ? 'resource template' : 'resource', capability.uri, earlier, capability.source)
    sources.set(capability.uri, capability.source)
    bindings.push({ capability, read, ...(complete ? { complete } : {}) })
  }
  for (const slot of generation.resources) {
    if (!ownsFor(slot.owner, owner)) continue
    const { uri, template, source, name, title, description, mimeType, size } = slot
    const capability: ResourceCapability = Object.freeze({ uri, template, name, ...defined({ title, description, mimeType, size }), source, owner: slot.owner, kind: 'feature' as const })
    const complete = slot.complete
    claim(capability, (at, params, signal) => slot.read(at, params, signal), complete ? (param, value) => complete.call(slot, param, value) : undefined)
  }
  for (const service of generation.seam?.resources.getFor(owner) ?? []) {
    const source = `seam:${service.id}`
    let listed: { plain: unknown[]; templates: unknown[] }
    try {
      const [plain, templates] = await Promise.all([service.list(owner), service.templates?.(owner) ?? []])
      if (!Array.isArray(plain) || !Array.isArray(templates)) throw new Error('list() or templates() did not return an array')
      listed = { plain, templates }
    } catch (error) {
      diagnose({ code: 'PROVIDER_UNAVAILABLE', source, message: `resource service "${service.id}" contributed no resources: ${messageOf(error)}` })
      continue
    }
    const read: ResourceBinding['read'] = (uri, _params, signal) => service.read(owner, uri, { signal })
    for (const [template, entries] of [[false, listed.plain], [true, listed.templates]] as const) {
      for (const e of entries as Record<string, unknown>[]) {
        const uri = template ? e?.uriTemplate : e?.uri
        if (typeof uri !== 'string' || uri === '') continue
        const text = (v: unknown) => (typeof v === 'string' ? v : undefined)
        const size = typeof e.size === 'number' ? e.size : undefined
        const capability: ResourceCapability = Object.freeze({
          uri,
          template,
          name: text(e.name) ?? uri,
          ...defined({ title: text(e.title), description: text(e.description), mimeType: text(e.mimeType), size }),
          source,
          owner,
          kind: 'seam' as const,
        })
        claim(capability, read)
      }
    }
  }
  return bindings
}

function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  const out: Partial<T> = {}
  for (const key of Object.keys(fields) as (keyof T)[]) if (fields[key] !== undefined) out[key] = fields[key]
  return out
}

function perOwner<V>(table: WeakMap<Generation, Map<string, V>>, generation: Generation): Map<string, V> {
  let owners = table.get(generation)
  if (owners === undefined) {
    owners = new Map()
    table.set(generation, owners)
  }
  return owners
}

function duplicate(kind: string, name: string, earlier: string, source: string): never {
  throw new SeamError('DUPLICATE_CAPABILITY', `duplicate ${kind} name "${name}": provided by ${earlier} and by ${source}`, {
    details: { name, sources: [earlier, source] },
    hint: 'rename one of them or hide it',
  })
}

/**
 * A skill's `tools:` entry naming no tool of the projection: a warning at the entry (the skill
 * still loads; the model would be told to call a tool it does not have). A nested plugin's skill
 * may name its own tools unqualified.
 */
function warnUnknownTools(slot: SkillSlot, named: ReadonlyMap<string, unknown>, diagnose: (d: Diagnostic) => void): void {
  const prefix = slot.owner
    .split('/')
    .slice(1)
    .map((part) => `${part}__`)
    .join('')
  const at = (slot.definition as SkillFile).toolsAt
  for (const [i, name] of (slot.definition.tools ?? []).entries()) {
    if (named.has(name) || named.has(prefix + name)) continue
    const where = at?.[i]
    const place = where ? `${slot.source}:${where.line}:${where.column}: ` : ''
    diagnose({
      code: 'SKILL_UNKNOWN_TOOL',
      message: `${place}skill "${slot.name}" lists tool "${name}" in \`tools:\`, and there is no such tool`,
      source: slot.source,
      ...(where ? { file: where.file, line: where.line, column: where.column, frame: where.frame } : {}),
    })
  }
}


/**
 * `capabilities` with one more tool bound by `service` (a runtime built-in offered per turn, like
 * `run_code`): a new frozen snapshot whose turns look calls up in the old one's bindings plus this
 * one's. `undefined` when the catalog already has a tool of that name (it is offered instead).
 */
export function withBuiltinTool(capabilities: AgentCapabilities, generation: Generation, capability: ToolCapability, service: ToolService): AgentCapabilities | undefined {
  if (capabilities.tools.some((tool) => tool.name === capability.name)) return undefined
  const tools = new Map(toolsByName(capabilities, generation))
  tools.set(capability.name, { kind: 'seam', capability, generation, service, scope: capabilities.owner })
  const extended: AgentCapabilities = Object.freeze({ ...capabilities, tools: Object.freeze([...capabilities.tools, capability]) })
  byName.set(extended, tools)
  return extended
}

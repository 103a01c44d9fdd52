// The projection of one owner in one generation: its Feature and Seam tools, skills and resources
// merged into one frozen snapshot, made once per (generation, owner). A name provided twice rejects
// with `DUPLICATE_CAPABILITY`; a provider that throws contributes nothing and leaves a diagnostic.

import { SeamError, messageOf } from '../../errors.js'
import type { Diagnostic } from '../../features/diagnostic.js'
import type { ToolSchema } from '../../seams/types.js'
import { featureTemplate } from './feature-capability.js'
import { LOAD_SKILL, loadSkillTool } from './load-skill.js'
import { seamTool } from './seam-capability.js'
import type { SkillFile } from '../../features/skill-file.js'
import type { Generation, SkillSlot } from './generation.js'
import { planOf } from './tool-plan.js'

import type { AgentCapabilities, ResourceCapability, SkillCapability, ToolCapability } from '../../seams/capabilities.js'
import { bindResources, type ResourceBinding } from './resource-read.js'
import { READ_RESOURCE, readResourceTool } from './read-resource.js'
import { bindTools, type ToolBinding } from './tool-binding.js'

/** One owner's projection in one generation, and the filtered views its turns have asked for. */
export interface Projection {
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

/** Per generation and owner: the projection once it is made. */
export const settled = new WeakMap<Generation, Map<string, Projection>>()

function restricted(tool: ToolCapability): boolean {
  return tool.platforms.length > 0 || tool.scopes.length > 0 || tool.permissions.length > 0
}

function ownsFor(slotOwner: string, owner: string): boolean {
  return slotOwner === owner || owner.startsWith(`${slotOwner}/`) || slotOwner.startsWith(`${owner}/`)
}

/** Makes `owner`'s projection in `generation` (`CapabilityIngress.project` makes it once); rejects with `DUPLICATE_CAPABILITY` on a name clash. */
export async function projectOwner(generation: Generation, owner: string): Promise<Projection> {
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
  const projection: Projection = {
    tools: frozenTools,
    skills: frozenSkills,
    base,
    gated,
    permissions: [...new Set(gated.flatMap((tool) => tool.permissions))].sort(),
    views: new Map(),
  }
  bindTools(generation, owner, base, named)
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

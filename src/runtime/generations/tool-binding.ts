// How each projected tool executes in its generation: the binding behind a capability, and the
// bound tools of a capabilities object by name (the map a turn looks its calls up in).

import type { ToolService } from '../../seams/types.js'
import type { AgentCapabilities, ToolCapability } from '../../seams/capabilities.js'
import type { Generation, ToolSlot } from './generation.js'
import type { ToolPlan } from './tool-plan.js'

/**
 * How a capability executes in one generation; kept off the public object so it cannot be swapped.
 * A feature tool that did not change is the same capability object in every generation (see
 * `featureTemplate`), so its binding belongs to the generation, not to the object.
 */
export type ToolBinding =
  | { readonly kind: 'feature'; readonly capability: ToolCapability; readonly generation: Generation; readonly slot: ToolSlot; readonly plan: ToolPlan }
  | { readonly kind: 'seam'; readonly capability: ToolCapability; readonly generation: Generation; readonly service: ToolService; readonly scope: string }

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
 * Records `named`, the bound tools of `base` (the projection of `owner` in `generation`): what
 * `toolsByName` answers for `base`, and what it builds the map of each filtered view from.
 */
export function bindTools(generation: Generation, owner: string, base: AgentCapabilities, named: ReadonlyMap<string, ToolBinding>): void {
  byName.set(base, named)
  let owners = projected.get(generation)
  if (owners === undefined) {
    owners = new Map()
    projected.set(generation, owners)
  }
  owners.set(owner, named)
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

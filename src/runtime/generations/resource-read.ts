import { matchTemplate } from '../../features/resource.js'
import type { ResourceCapability } from '../../seams/capabilities.js'
import type { ResourceContents } from '../../seams/resources.js'
import type { Generation } from './generation.js'

/** How one projected resource is read in its generation; kept off the public object. */
export interface ResourceBinding {
  readonly capability: ResourceCapability
  read(uri: string, params: Record<string, string>, signal: AbortSignal): Promise<ResourceContents[]>
  /** A template's completer (`ResourceSlot.complete`): what it offers for `param`, unchecked. */
  complete?(param: string, value: string): unknown
}

/** Per generation and owner: the bound resources of the owner's projection (plain ones by URI, then templates in order). */
const bound = new WeakMap<Generation, Map<string, { readonly plain: ReadonlyMap<string, ResourceBinding>; readonly templates: readonly ResourceBinding[] }>>()

export function bindResources(generation: Generation, owner: string, bindings: readonly ResourceBinding[]): void {
  let owners = bound.get(generation)
  if (owners === undefined) {
    owners = new Map()
    bound.set(generation, owners)
  }
  const plain = new Map<string, ResourceBinding>()
  const templates: ResourceBinding[] = []
  for (const b of bindings) {
    if (b.capability.template) templates.push(b)
    else plain.set(b.capability.uri, b)
  }
  owners.set(owner, { plain, templates })
}

/** The template `owner` sees in `generation` under exactly `uriTemplate` (projected first), or `undefined`. */
export function boundTemplate(generation: Generation, owner: string, uriTemplate: string): ResourceBinding | undefined {
  return bound.get(generation)?.get(owner)?.templates.find((t) => t.capability.uri === uriTemplate)
}

/**
 * Reads `uri` as `owner` sees it in `generation` (projected first, see `CapabilityIngress.project`):
 * a listed resource by its URI, else the first template it matches. `undefined` when neither has it.
 */
export async function readResource(generation: Generation, owner: string, uri: string, signal: AbortSignal): Promise<{ capability: ResourceCapability; contents: ResourceContents[] } | undefined> {
  const own = bound.get(generation)?.get(owner)
  if (own === undefined) return undefined
  const exact = own.plain.get(uri)
  if (exact !== undefined) return { capability: exact.capability, contents: await exact.read(uri, {}, signal) }
  for (const t of own.templates) {
    const params = matchTemplate(t.capability.uri, uri)
    if (params !== undefined) return { capability: t.capability, contents: await t.read(uri, params, signal) }
  }
  return undefined
}

import { toContents } from '../../features/resource.js'
import type { ResourceFile } from '../../features/resource-file.js'
import type { PluginInstance } from '../plugins/plugin-instance.js'
import type { ResourceSlot } from './generation.js'

/** The `addResource` registrations of a plugin tree, as slots (a template when the URI has parameters). */
export function addedResources(root: PluginInstance): ResourceSlot[] {
  const slots: ResourceSlot[] = []
  for (const plugin of root.walk()) {
    const source = `addResource(${plugin.owner})`
    for (const [uri, definition] of plugin.published) {
      slots.push(
        Object.freeze({
          id: `${plugin.owner}#resource:${uri}`,
          owner: plugin.owner,
          uri,
          template: definition.params.length > 0,
          source,
          name: definition.name,
          ...(definition.title !== undefined ? { title: definition.title } : {}),
          ...(definition.description !== undefined ? { description: definition.description } : {}),
          ...(definition.mimeType !== undefined ? { mimeType: definition.mimeType } : {}),
          version: definition,
          ...(definition.complete ? { complete: (param: string, value: string) => (Object.hasOwn(definition.complete!, param) ? definition.complete![param]!(value) : []) } : {}),
          read: async (at: string, params: Record<string, string>, signal: AbortSignal) => toContents(await definition.read(params, { uri: at, signal }), at, definition.mimeType),
        }),
      )
    }
  }
  return slots
}

/** A file under `agent/resources/`: its content as this load read it, the same for every read. */
export function fileResource(owner: string, file: string, source: string, parsed: ResourceFile): ResourceSlot {
  const contents = Object.freeze([
    Object.freeze(parsed.text !== undefined ? { uri: parsed.uri, mimeType: parsed.mimeType, text: parsed.text } : { uri: parsed.uri, mimeType: parsed.mimeType, blob: parsed.blob! }),
  ])
  return Object.freeze({
    id: `${owner}#${file}`,
    owner,
    uri: parsed.uri,
    template: false,
    source,
    name: parsed.name,
    ...(parsed.title !== undefined ? { title: parsed.title } : {}),
    ...(parsed.description !== undefined ? { description: parsed.description } : {}),
    mimeType: parsed.mimeType,
    size: parsed.size,
    version: parsed.digest,
    read: async () => [...contents],
  })
}

const identities = new WeakMap<object, number>()
let identitySeq = 0

/** A resource slot's version as a string: a file's digest, or the identity of an `addResource` definition. */
export function versionKey(slot: ResourceSlot): string {
  if (typeof slot.version === 'string') return slot.version
  const object = slot.version as object
  let n = identities.get(object)
  if (n === undefined) {
    n = ++identitySeq
    identities.set(object, n)
  }
  return `#${n}|${slot.source}`
}

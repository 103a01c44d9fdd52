import { messageOf } from '../../errors.js'
import { toolFingerprint } from '../../features/schema.js'
import type { ContentBlock } from '../../seams/content.js'
import type { ResourceContents } from '../../seams/resources.js'
import type { JsonSchema, ToolExecutionResult, ToolService } from '../../seams/types.js'
import type { ResourceCapability, ToolCapability } from '../../seams/capabilities.js'
import type { Generation } from './generation.js'
import { readResource } from './resource-read.js'

/** The name of the built-in tool that reads a resource. */
export const READ_RESOURCE = 'read_resource'
/** The `source` of the built-in tool, as catalogs and the journal show it. */
export const READ_RESOURCE_SOURCE = 'builtin:read_resource'

/** How many resources the tool's description names; past this the model is told how many more there are. */
const LISTED = 50

/**
 * The built-in `read_resource` tool of one owner's projection, offered when it has resources: it
 * reads a URI (a listed one, or one a template matches) in the generation the turn is leased on,
 * through the whole pipeline (arguments, hooks, approval `never`, journal).
 */
export function readResourceTool(resources: readonly ResourceCapability[], generation: Generation, owner: string): { capability: ToolCapability; service: ToolService } {
  const description = describe(resources)
  const parameters: JsonSchema = Object.freeze({
    type: 'object',
    properties: Object.freeze({ uri: Object.freeze({ type: 'string', description: 'The URI of the resource (a listed one, or one of a template with its {parameters} filled in).' }) }),
    required: Object.freeze(['uri']),
    additionalProperties: false,
  }) as JsonSchema
  const capability: ToolCapability = Object.freeze({
    name: READ_RESOURCE,
    description,
    parameters,
    source: READ_RESOURCE_SOURCE,
    owner,
    kind: 'seam',
    approval: 'never',
    permissions: Object.freeze([]),
    platforms: Object.freeze([]),
    scopes: Object.freeze([]),
    annotations: Object.freeze({ readOnlyHint: true, idempotentHint: true, openWorldHint: false }),
    concurrencySafe: true,
    fingerprint: toolFingerprint(READ_RESOURCE, description, parameters),
  })
  const service: ToolService = {
    id: READ_RESOURCE_SOURCE,
    description: "The runtime's built-in resource reader.",
    schema: () => [],
    async execute(_scope, _tool, input, context): Promise<ToolExecutionResult> {
      const uri = (input as { uri?: unknown } | null)?.uri
      if (typeof uri !== 'string') return { success: false, error: 'read_resource needs a `uri` string.' }
      let read: Awaited<ReturnType<typeof readResource>>
      try {
        read = await readResource(generation, owner, uri, context?.signal ?? new AbortController().signal)
      } catch (error) {
        return { success: false, error: `Reading ${uri} failed: ${messageOf(error)}` }
      }
      if (read === undefined) return { success: false, error: `There is no resource ${JSON.stringify(uri)}. ${names(resources)}` }
      return {
        success: true,
        // The value the journal keeps: text as it is, bytes by their size (the content blocks carry them).
        output: { uri, contents: read.contents.map((c) => ({ uri: c.uri, ...(c.mimeType !== undefined ? { mimeType: c.mimeType } : {}), ...('text' in c ? { text: c.text } : { bytes: Buffer.byteLength(c.blob, 'base64') }) })) },
        content: read.contents.map(toBlock),
      }
    },
  }
  return { capability, service }
}

/** Text as text, an image as an image, any other bytes as an embedded resource. */
function toBlock(c: ResourceContents): ContentBlock {
  if ('text' in c) return { type: 'text', text: c.text }
  if (c.mimeType?.startsWith('image/') && c.mimeType !== 'image/svg+xml') return { type: 'image', data: c.blob, mimeType: c.mimeType }
  return { type: 'resource', resource: c }
}

function describe(resources: readonly ResourceCapability[]): string {
  const lines = ['Read a resource by URI. The resources:']
  for (const r of resources.slice(0, LISTED)) {
    const what = [r.title ?? (r.name !== r.uri ? r.name : undefined), r.description, r.mimeType].filter(Boolean).join(' — ')
    lines.push(`- ${r.uri}${r.template ? ' (template)' : ''}${what ? `: ${what}` : ''}`)
  }
  if (resources.length > LISTED) lines.push(`… and ${resources.length - LISTED} more.`)
  return lines.join('\n')
}

function names(resources: readonly ResourceCapability[]): string {
  const some = resources.slice(0, 20).map((r) => r.uri)
  return `The resources are: ${some.join(', ')}${resources.length > some.length ? ', …' : ''}.`
}

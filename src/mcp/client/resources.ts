// A mounted server's resources as `McpToolService` serves them (a `ResourceService`): every page of
// `resources/list` and `resources/templates/list`, and one `resources/read`.

import { SeamError } from '../../errors.js'
import type { ResourceContents, ResourceDescriptor, ResourceTemplateDescriptor } from '../../seams/resources.js'
import type { McpConnection } from './connection.js'
import { type Redactor, redactedError, safeMessage } from './redact.js'

/** The server's resources and templates; `PROVIDER_UNAVAILABLE`, its message redacted, when it does not list them. */
export async function listResources(connection: McpConnection, serverId: string, redact: Redactor): Promise<{ resources: ResourceDescriptor[]; templates: ResourceTemplateDescriptor[] }> {
  let listed: { resources: unknown[]; templates: unknown[] }
  try {
    listed = await connection.listResources()
  } catch (error) {
    connection.suspect(error)
    throw new SeamError('PROVIDER_UNAVAILABLE', `MCP server "${serverId}" did not list its resources: ${safeMessage(error, redact)}`, { cause: redactedError(error, redact) })
  }
  return { resources: listed.resources as ResourceDescriptor[], templates: listed.templates as ResourceTemplateDescriptor[] }
}

/** One `resources/read` under `signal`: the contents with a URI and a text or a blob, as the server sent them. */
export async function readContents(connection: McpConnection, uri: string, signal: AbortSignal | undefined, timeoutMs: number): Promise<ResourceContents[]> {
  const result = await connection.readResource(uri, { signal, timeout: timeoutMs })
  return (result.contents as Record<string, unknown>[])
    .filter((c) => typeof c?.uri === 'string' && (typeof c.text === 'string' || typeof c.blob === 'string'))
    .map((c) => {
      const mime = typeof c.mimeType === 'string' ? { mimeType: c.mimeType } : {}
      return typeof c.text === 'string' ? { uri: c.uri as string, ...mime, text: c.text } : { uri: c.uri as string, ...mime, blob: c.blob as string }
    })
}

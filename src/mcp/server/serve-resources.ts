import { ProtocolError, ProtocolErrorCode, type ReadResourceResult } from '@modelcontextprotocol/server'
import { messageOf } from '../../errors.js'
import { redactText, scrubValues } from '../../runtime/base/redact.js'
import { readResource } from '../../runtime/generations/resource-read.js'
import type { Root } from '../../runtime/root.js'
import type { McpCatalog } from './serve-mapping.js'

/**
 * `resources/read` of a served session: a resource of the live generation, as the served owner
 * sees it. (`resources/list` and the templates are the catalog's; subscriptions are `Announcements`'.)
 */

/**
 * Reads a resource in the live generation, as `owner` sees it, once `catalog` (the bridge's) is
 * current. A URI that is neither listed nor matched by a template is `-32602` with the URI in
 * `data`, as the specification gives.
 */
export async function readLiveResource(root: Root, owner: string, catalog: () => Promise<McpCatalog>, uri: string, signal: AbortSignal): Promise<ReadResourceResult> {
  await catalog()
  const generation = root.activeGeneration
  await root.ingress.project(generation, owner)
  let read: Awaited<ReturnType<typeof readResource>>
  try {
    read = await readResource(generation, owner, uri, signal)
  } catch (error) {
    throw new ProtocolError(ProtocolErrorCode.InternalError, `reading ${scrubValues(uri)} failed: ${redactText(messageOf(error))}`)
  }
  if (read === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource not found: ${scrubValues(uri)}`, { uri })
  return { contents: read.contents }
}

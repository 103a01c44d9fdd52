import type { EmbeddedResource } from './content.js'

/**
 * Resources, the third capability kind: read-only content a turn (or an MCP client) reads by URI.
 * A `ResourceService` supplies them from outside the plugin tree (a mounted MCP server), as a
 * `ToolService` supplies tools; `CapabilityIngress` lists it once per generation and owner.
 */

/** One resource as a catalog lists it. */
export interface ResourceDescriptor {
  readonly uri: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  /** Bytes, when known. */
  readonly size?: number
}

/** A family of resources: an RFC 6570 level-1 URI template (`notes://{id}`). */
export interface ResourceTemplateDescriptor {
  readonly uriTemplate: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
}

/** What reading a resource yields: text, or bytes as base64 (`blob`), each with its URI. */
export type ResourceContents = EmbeddedResource

/** What a provider learns about one read. */
export interface ResourceReadContext {
  /** Aborted when the read is no longer wanted; a provider should observe it. */
  readonly signal?: AbortSignal
}

export interface ResourceService {
  readonly id: string
  readonly description: string
  list(scope: string): ResourceDescriptor[] | Promise<ResourceDescriptor[]>
  /** The provider's URI templates; none when left out. */
  templates?(scope: string): ResourceTemplateDescriptor[] | Promise<ResourceTemplateDescriptor[]>
  /** Reads one URI (a listed one, or one a template matches). */
  read(scope: string, uri: string, context?: ResourceReadContext): Promise<ResourceContents[]>
}

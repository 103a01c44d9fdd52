/**
 * Model-facing content blocks: what a tool call's outcome shows the model, and what a provider may
 * hand back next to (or instead of) a JSON value. The shapes are MCP's, so a remote server's result
 * passes through unchanged and a served outcome is valid MCP content as it stands.
 */

/** Hints about who a block is for and how much it matters (MCP `annotations`). */
export interface ContentAnnotations {
  audience?: ('user' | 'assistant')[]
  priority?: number
  lastModified?: string
}

export type TextContentBlock = { type: 'text'; text: string; annotations?: ContentAnnotations }
/** Base64 `data`. */
export type ImageContentBlock = { type: 'image'; data: string; mimeType: string; annotations?: ContentAnnotations }
/** Base64 `data`. */
export type AudioContentBlock = { type: 'audio'; data: string; mimeType: string; annotations?: ContentAnnotations }
/** A resource the model may read on its own; its contents are not included. */
export type ResourceLinkContentBlock = {
  type: 'resource_link'
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  size?: number
  annotations?: ContentAnnotations
}
/** A resource's contents inline: `text`, or base64 `blob`. */
export type EmbeddedResource = { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string }
export type EmbeddedResourceContentBlock = { type: 'resource'; resource: EmbeddedResource; annotations?: ContentAnnotations }

export type ContentBlock =
  | TextContentBlock
  | ImageContentBlock
  | AudioContentBlock
  | ResourceLinkContentBlock
  | EmbeddedResourceContentBlock

/** A checked copy of the blocks, or what is wrong with them. */
export type ContentCheck = { ok: true; content: ContentBlock[] } | { ok: false; problem: string }

/**
 * Checks blocks from an untrusted source (a provider, a render, a hook) and copies them into fresh
 * objects holding only the fields above, so the outcome shares nothing the source could change later.
 * An unknown block type is refused rather than dropped: the model would otherwise miss part of a result.
 */
export function checkContent(content: unknown): ContentCheck {
  if (!Array.isArray(content)) return { ok: false, problem: 'content must be an array of blocks' }
  const out: ContentBlock[] = []
  for (const block of content) {
    let copy: ContentBlock | undefined
    try {
      copy = copyBlock(block)
    } catch {
      // A getter or proxy that throws: the block is not plain data.
      copy = undefined
    }
    if (copy === undefined) return { ok: false, problem: `unsupported content block ${describe(block)}` }
    out.push(copy)
  }
  return { ok: true, content: out }
}

type Loose = Record<string, unknown>

function copyBlock(value: unknown): ContentBlock | undefined {
  if (!isObject(value)) return undefined
  const block = value as Loose
  const annotations = copyAnnotations(block.annotations)
  if (annotations === null) return undefined
  const extra = annotations ? { annotations } : {}
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? { type: 'text', text: block.text, ...extra } : undefined
    case 'image':
    case 'audio':
      if (typeof block.data !== 'string' || typeof block.mimeType !== 'string') return undefined
      return { type: block.type, data: block.data, mimeType: block.mimeType, ...extra }
    case 'resource_link': {
      if (typeof block.uri !== 'string' || typeof block.name !== 'string') return undefined
      const link: ResourceLinkContentBlock = { type: 'resource_link', uri: block.uri, name: block.name }
      for (const key of ['title', 'description', 'mimeType'] as const) {
        const field = block[key]
        if (field === undefined) continue
        if (typeof field !== 'string') return undefined
        link[key] = field
      }
      if (block.size !== undefined) {
        if (typeof block.size !== 'number' || !Number.isFinite(block.size)) return undefined
        link.size = block.size
      }
      return { ...link, ...extra }
    }
    case 'resource': {
      const resource = copyResource(block.resource)
      return resource ? { type: 'resource', resource, ...extra } : undefined
    }
    default:
      return undefined
  }
}

function copyResource(value: unknown): EmbeddedResource | undefined {
  if (!isObject(value)) return undefined
  const { uri, mimeType, text, blob } = value as Loose
  if (typeof uri !== 'string' || (mimeType !== undefined && typeof mimeType !== 'string')) return undefined
  const type = mimeType === undefined ? {} : { mimeType }
  if (typeof text === 'string' && blob === undefined) return { uri, ...type, text }
  if (typeof blob === 'string' && text === undefined) return { uri, ...type, blob }
  return undefined
}

/** A copy of the known annotation fields, `undefined` when there are none, `null` when malformed. */
function copyAnnotations(value: unknown): ContentAnnotations | undefined | null {
  if (value === undefined) return undefined
  if (!isObject(value)) return null
  const { audience, priority, lastModified } = value as Loose
  const out: ContentAnnotations = {}
  if (audience !== undefined) {
    if (!Array.isArray(audience) || !audience.every((a) => a === 'user' || a === 'assistant')) return null
    out.audience = [...audience]
  }
  if (priority !== undefined) {
    if (typeof priority !== 'number' || !(priority >= 0 && priority <= 1)) return null
    out.priority = priority
  }
  if (lastModified !== undefined) {
    if (typeof lastModified !== 'string') return null
    out.lastModified = lastModified
  }
  return Object.keys(out).length > 0 ? out : undefined
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function describe(block: unknown): string {
  try {
    return (JSON.stringify(block) ?? String(block)).slice(0, 80)
  } catch {
    return 'that cannot be read'
  }
}

/**
 * A plain-text view of content for terminals and logs: text as it is, every other block as a short
 * bracketed line (`[image image/png, 1,204 base64 chars]`, `[resource file:///a.txt]`).
 */
export function contentText(content: readonly ContentBlock[]): string {
  return content.map(blockText).join('\n')
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${block.data.length.toLocaleString('en-US')} base64 chars]`
    case 'resource_link':
      return `[resource link ${block.uri}${block.mimeType ? ` ${block.mimeType}` : ''}]`
    case 'resource':
      return 'text' in block.resource ? `[resource ${block.resource.uri}]\n${block.resource.text}` : `[resource ${block.resource.uri}, ${block.resource.blob.length.toLocaleString('en-US')} base64 chars]`
  }
}

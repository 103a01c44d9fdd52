import { createHash } from 'node:crypto'
import { extname } from 'node:path'
import { SeamError } from '../errors.js'
import { codeFrame } from './loader/code-frame.js'
import { displayPath } from './loader/file-name.js'
import { type Fail, frontMatterData, splitFrontMatter } from './skill-file.js'

/** A parsed file under `agent/resources/`: what it is, and its content as of this load. */
export interface ResourceFile {
  readonly uri: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType: string
  /** The content: text (front matter removed), or bytes as base64. */
  readonly text?: string
  readonly blob?: string
  readonly size: number
  /** A digest of what a read returns and how it is listed: equal digests, nothing to announce. */
  readonly digest: string
}

/** MIME types by extension; a file not listed is `application/octet-stream` and served as a blob. */
const MIME: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.css': 'text/css',
  '.xml': 'application/xml',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.svg': 'image/svg+xml',
  '.js': 'text/javascript',
  '.ts': 'text/x-typescript',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
}

/** The files whose front matter (between `---` lines at the top) describes the resource. */
const WITH_FRONT_MATTER = new Set(['.md', '.markdown', '.txt'])

export function mimeTypeOf(file: string): string {
  return MIME[extname(file).toLowerCase()] ?? 'application/octet-stream'
}

function isText(mimeType: string): boolean {
  return mimeType.startsWith('text/') || mimeType === 'application/json' || mimeType === 'application/xml' || mimeType === 'application/yaml' || mimeType === 'image/svg+xml'
}

/**
 * Parses one resource file. `rel` is its path under `agent/resources/` with `/` separators; the
 * default URI is `resource://<owner>/<rel>` and the default name `rel`. A Markdown or text file may
 * set `uri`, `name`, `title`, `description` and `mimeType` in front matter (data only, never
 * evaluated); problems throw `INVALID_PLUGIN` with the line. A text file that is not UTF-8 is a blob.
 */
export function parseResourceFile(file: string, bytes: Uint8Array, where: { owner: string; rel: string; relativeTo?: string }): ResourceFile {
  const ext = extname(file).toLowerCase()
  let mimeType = mimeTypeOf(file)
  let text: string | undefined
  if (isText(mimeType)) {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      text = undefined
    }
  }
  const meta: Record<string, string> = {}
  if (text !== undefined && WITH_FRONT_MATTER.has(ext)) {
    const fail: Fail = (message, line, column) => {
      const at = line === undefined ? '' : `:${line}:${column ?? 1}`
      return new SeamError('INVALID_PLUGIN', `${displayPath(file, where.relativeTo)}${at}: ${message}`, {
        details: { file, line, column, frame: line === undefined ? undefined : codeFrame(text!, line, column ?? 1) },
      })
    }
    const { yaml, body, yamlLine } = splitFrontMatter(text, fail)
    if (yaml !== undefined) {
      const { data, positionOf } = frontMatterData(yaml, (message, line, column) => fail(message, line + yamlLine - 1, column), 'uri, name, title, description, mimeType')
      for (const key of ['uri', 'name', 'title', 'description', 'mimeType']) {
        const value = data[key]
        if (value === undefined) continue
        if (typeof value !== 'string' || value.trim() === '') {
          const { line, col } = positionOf(key)
          throw fail(`\`${key}\` must be a non-empty string`, line + yamlLine - 1, col)
        }
        meta[key] = value.trim()
      }
      if (meta.uri !== undefined && !/^[a-z][a-z0-9+.-]*:\S*$/i.test(meta.uri)) {
        const { line, col } = positionOf('uri')
        throw fail(`\`uri\` must be a URI with a scheme (resource://…, notes://…); got ${JSON.stringify(meta.uri)}`, line + yamlLine - 1, col)
      }
      text = body
    }
  }
  if (meta.mimeType !== undefined) mimeType = meta.mimeType
  const uri = meta.uri ?? `resource://${where.owner}/${where.rel.split('/').map(encodeURIComponent).join('/')}`
  const content = text !== undefined ? { text } : { blob: Buffer.from(bytes).toString('base64') }
  const size = text !== undefined ? Buffer.byteLength(text) : bytes.byteLength
  const described = { uri, name: meta.name ?? where.rel, title: meta.title, description: meta.description, mimeType }
  const digest = createHash('sha256').update(JSON.stringify(described)).update('\0').update(text ?? content.blob!).digest('base64url')
  return Object.freeze({
    uri,
    name: described.name,
    ...(meta.title ? { title: meta.title } : {}),
    ...(meta.description ? { description: meta.description } : {}),
    mimeType,
    ...content,
    size,
    digest,
  })
}

import { SeamError } from '../errors.js'
import type { ResourceContents } from '../seams/resources.js'

/** What a resource's `read` may return: text, bytes, one contents object, or several. */
export type ResourceValue =
  | string
  | Uint8Array
  | { readonly text: string; readonly mimeType?: string }
  | { readonly blob: Uint8Array | string; readonly mimeType?: string }
  | readonly ResourceContents[]

/** What `read` receives besides the template's parameters. */
export interface ResourceReadInfo {
  /** The URI being read. */
  readonly uri: string
  readonly signal: AbortSignal
}

/**
 * `ctx.addResource(uri, spec)`: a resource, or (when `uri` has `{name}` parameters) a template whose
 * `read` gets the parameters a read's URI fills in.
 */
export interface ResourceSpec {
  name?: string
  title?: string
  description?: string
  mimeType?: string
  read(params: Record<string, string>, info: ResourceReadInfo): ResourceValue | Promise<ResourceValue>
  /**
   * A template's completers: for a parameter, the values `completion/complete` offers for what was
   * typed so far (the first 100 are sent; a throw or an answer after 2 s offers none).
   */
  complete?: Record<string, (value: string) => string[] | Promise<string[]>>
}

/** A checked `ResourceSpec`, frozen, with its URI. */
export interface ResourceDefinition extends Readonly<ResourceSpec> {
  readonly uri: string
  readonly name: string
  /** The template's parameter names, in order; empty for a plain resource. */
  readonly params: readonly string[]
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i
const PARAM = /\{([A-Za-z0-9_]+)\}/g

/** Checks `ctx.addResource`'s arguments; problems throw `INVALID_PLUGIN`. */
export function defineResource(uri: string, spec: ResourceSpec): ResourceDefinition {
  if (typeof uri !== 'string' || !SCHEME.test(uri) || /\s/.test(uri)) {
    throw new SeamError('INVALID_PLUGIN', `addResource: ${JSON.stringify(uri)} is not a URI (it needs a scheme, as in notes://today, and no spaces)`)
  }
  if (typeof spec?.read !== 'function') throw new SeamError('INVALID_PLUGIN', `addResource("${uri}"): \`read\` must be a function`)
  for (const key of ['name', 'title', 'description', 'mimeType'] as const) {
    if (spec[key] !== undefined && typeof spec[key] !== 'string') throw new SeamError('INVALID_PLUGIN', `addResource("${uri}"): \`${key}\` must be a string`)
  }
  const params = templateParams(uri)
  if (spec.complete !== undefined) {
    if (typeof spec.complete !== 'object' || spec.complete === null || Array.isArray(spec.complete)) throw new SeamError('INVALID_PLUGIN', `addResource("${uri}"): \`complete\` must be an object of functions, one per template parameter`)
    for (const [key, completer] of Object.entries(spec.complete)) {
      if (!params.includes(key)) throw new SeamError('INVALID_PLUGIN', `addResource("${uri}"): \`complete.${key}\` is not a parameter of the template (${params.length > 0 ? params.map((p) => `{${p}}`).join(', ') : 'it has none'})`)
      if (typeof completer !== 'function') throw new SeamError('INVALID_PLUGIN', `addResource("${uri}"): \`complete.${key}\` must be a function`)
    }
  }
  return Object.freeze({ ...spec, uri, name: spec.name ?? uri, params: Object.freeze(params), ...(spec.complete ? { complete: Object.freeze({ ...spec.complete }) } : {}) })
}

/**
 * The parameter names of an RFC 6570 level-1 template (`{name}` only); other expressions (`{+x}`,
 * `{?x}`, `{a,b}`) are refused, and so are unbalanced braces.
 */
export function templateParams(uri: string): string[] {
  const names: string[] = []
  const rest = uri.replace(PARAM, (_m, name: string) => {
    if (names.includes(name)) throw new SeamError('INVALID_PLUGIN', `the URI template ${JSON.stringify(uri)} repeats {${name}}`)
    names.push(name)
    return ''
  })
  if (/[{}]/.test(rest)) throw new SeamError('INVALID_PLUGIN', `the URI template ${JSON.stringify(uri)} is not level 1 (only {name} expressions)`)
  return names
}

/**
 * Matches `uri` against a level-1 template: each `{name}` takes a non-empty run without `/`, `?`
 * or `#` (simple expansion percent-encodes those), decoded. `undefined` when it does not match.
 */
export function matchTemplate(template: string, uri: string): Record<string, string> | undefined {
  const names: string[] = []
  let pattern = ''
  let last = 0
  for (const m of template.matchAll(PARAM)) {
    pattern += escapeRegExp(template.slice(last, m.index)) + '([^/?#]+)'
    names.push(m[1]!)
    last = m.index + m[0].length
  }
  pattern += escapeRegExp(template.slice(last))
  const found = new RegExp(`^${pattern}$`).exec(uri)
  if (found === null) return undefined
  const params: Record<string, string> = {}
  try {
    names.forEach((name, i) => {
      params[name] = decodeURIComponent(found[i + 1]!)
    })
  } catch {
    return undefined
  }
  return params
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** A read's value as MCP resource contents, each with `uri` (and the declared MIME type when it has none). */
export function toContents(value: ResourceValue, uri: string, mimeType: string | undefined): ResourceContents[] {
  const mime = (own: string | undefined) => ((own ?? mimeType) !== undefined ? { mimeType: own ?? mimeType } : {})
  if (typeof value === 'string') return [{ uri, ...mime(undefined), text: value }]
  if (value instanceof Uint8Array) return [{ uri, ...mime(undefined), blob: Buffer.from(value).toString('base64') }]
  if (Array.isArray(value)) {
    return value.map((c) => {
      if (typeof c?.uri !== 'string' || (typeof c.text !== 'string' && typeof (c as { blob?: unknown }).blob !== 'string')) {
        throw new SeamError('INVALID_OUTPUT', `the resource ${uri} was read as a list holding something other than { uri, text } or { uri, blob }`)
      }
      return c
    })
  }
  const one = value as { text?: unknown; blob?: unknown; mimeType?: string }
  if (typeof one?.text === 'string') return [{ uri, ...mime(one.mimeType), text: one.text }]
  if (one?.blob instanceof Uint8Array) return [{ uri, ...mime(one.mimeType), blob: Buffer.from(one.blob).toString('base64') }]
  if (typeof one?.blob === 'string') return [{ uri, ...mime(one.mimeType), blob: one.blob }]
  throw new SeamError('INVALID_OUTPUT', `the resource ${uri} was read as something other than text, bytes or { text } / { blob }`)
}

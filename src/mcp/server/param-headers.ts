/**
 * SEP-2243 tool parameter headers (2026-07-28 over HTTP): a tool's input property carrying
 * `x-mcp-header: <Name>` travels in an `Mcp-Param-<Name>` header as well as in the body, so a proxy
 * can route on it without reading the body. A call must therefore carry the header for every such
 * argument it sends, and the header must say what the body says. The server checks it before the
 * call runs:
 *
 * - an argument that is absent or `null` expects no header (one sent is ignored);
 * - a header value `=?base64?<payload>?=` is the canonical Base64 of the UTF-8 value; any other
 *   value is the value itself;
 * - integers and numbers compare as numbers (`42.0` is `42`), the rest as text (booleans are
 *   `true` / `false`).
 *
 * A missing, different or badly encoded header is refused with HTTP 400 and the JSON-RPC error
 * `-32020` (HeaderMismatch), as the SDK's own HTTP handler refuses a mismatched `Mcp-Method`.
 */

export const HEADER_MISMATCH = -32020

/** One `x-mcp-header` declaration: where the argument sits, its header name and its type. */
interface ParamHeader {
  readonly path: readonly string[]
  readonly header: string
  readonly type: unknown
}

/** Why a call's headers are refused, or `undefined` when they agree with its arguments. */
export function paramHeaderMismatch(inputSchema: unknown, args: unknown, headers: Headers): string | undefined {
  for (const declaration of declarations(inputSchema)) {
    const value = valueAt(args, declaration.path)
    if (value === undefined || value === null) continue
    const text = asText(value)
    if (text === undefined) continue
    const name = `Mcp-Param-${declaration.header}`
    const sent = headers.get(name)
    const where = declaration.path.join('.')
    if (sent === null) return `the body carries ${where} but the ${name} header is absent`
    const decoded = decode(sent.trim())
    if (decoded === undefined) return `the ${name} header carries an invalid Base64 value`
    const numeric = (declaration.type === 'integer' || declaration.type === 'number') && typeof value === 'number' && DECIMAL.test(decoded)
    if (numeric ? Number(decoded) !== value : decoded !== text) return `the ${name} header does not match ${where} in the body`
  }
  return undefined
}

const DECIMAL = /^-?\d+(\.\d+)?$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const PREFIX = '=?base64?'
const SUFFIX = '?='

/** The declarations reachable from the root through `properties` alone (the only place SEP-2243 allows them). */
function declarations(schema: unknown, path: readonly string[] = []): ParamHeader[] {
  const properties = (schema as { properties?: unknown } | null)?.properties
  if (properties === null || typeof properties !== 'object') return []
  return Object.entries(properties as Record<string, unknown>).flatMap(([key, property]) => {
    if (property === null || typeof property !== 'object') return []
    const header = (property as Record<string, unknown>)['x-mcp-header']
    const here = [...path, key]
    if (typeof header === 'string' && header.length > 0) return [{ path: here, header, type: (property as { type?: unknown }).type }]
    return declarations(property, here)
  })
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node
}

function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return String(value)
  return undefined
}

function decode(value: string): string | undefined {
  if (!(value.startsWith(PREFIX) && value.endsWith(SUFFIX) && value.length >= PREFIX.length + SUFFIX.length)) return value
  const payload = value.slice(PREFIX.length, value.length - SUFFIX.length)
  if (!BASE64.test(payload)) return undefined
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'))
  } catch {
    return undefined
  }
}

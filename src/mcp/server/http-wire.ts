import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'

/**
 * The node:http side of the MCP endpoint: a node request as a web `Request` (the SDK's transports
 * take those), a web `Response` written back, bodies read under a cap, JSON-RPC bodies looked into,
 * and the JSON-RPC error replies of the endpoint's own guards.
 */

/** Where MCP is served. */
export const PATH = '/mcp'
/** The largest request body read (413 past it). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024

/** A request header's (first) value. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** What `parseJson` answers for a body that is not JSON. */
export const INVALID = Symbol('invalid JSON')

/** The body as JSON, or `INVALID`. */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'))
  } catch {
    return INVALID
  }
}

/** The ids of the requests (not notifications or responses) in a JSON-RPC message or batch. */
export function requestIds(message: unknown): (string | number)[] {
  const messages = Array.isArray(message) ? message : [message]
  return messages.flatMap((m) => {
    const { id, method } = (m ?? {}) as { id?: unknown; method?: unknown }
    return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? [id] : []
  })
}

/** The node request as a web `Request` with `body` (read already) and `signal`. */
export function webRequest(req: IncomingMessage, body: Buffer | undefined, signal: AbortSignal | undefined): Request {
  return new Request(new URL(req.url ?? PATH, 'http://localhost'), { method: req.method, headers: toHeaders(req), body, signal })
}

/** Writes a web `Response` (a JSON body or an SSE stream) to the node response. */
export function send(res: ServerResponse, response: Response): void {
  res.writeHead(response.status, Object.fromEntries(response.headers))
  if (!response.body) {
    res.end()
    return
  }
  const stream = Readable.fromWeb(response.body as NodeReadableStream)
  res.on('close', () => stream.destroy())
  stream.pipe(res)
}

/** The node request's headers as web `Headers` (repeated ones joined). */
export function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers()
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value)
  }
  return headers
}

/** The whole body, or `'too-large'` once it passes `MAX_BODY_BYTES`. */
export async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) return 'too-large'
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** A JSON-RPC error body, as the SDK's own HTTP guards answer. */
export function reply(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  replyError(res, status, -32000, message, null, headers)
}

/** A JSON-RPC error body with its own `code` and the `id` of the request it answers. */
export function replyError(res: ServerResponse, status: number, code: number, message: string, id: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }))
}

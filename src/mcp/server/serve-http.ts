import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import {
  createMcpHandler,
  isLegacyRequest,
  validateHostHeader,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import { SeamError } from '../../errors.js'
import type { Root } from '../../runtime/root.js'
import type { McpServeOptions } from './serve-options.js'
import { allowedHostnames, isLoopback, reachableUrls } from './http-hosts.js'
import { capConnectionsPerClient, type HttpLimits, resolveLimits } from './http-limits.js'
import { type HttpSession, HttpSessions } from './http-sessions.js'
import { HEADER_MISMATCH, paramHeaderMismatch } from './param-headers.js'
import { McpBridge } from './serve-bridge.js'

export type McpHttpOptions = McpServeOptions &
  HttpLimits & {
  /**
   * Default `127.0.0.1`. Any other than a loopback address needs `token`. A wildcard (`0.0.0.0`,
   * `::`) accepts this machine's name and addresses as `Host`, and `urls` lists the ones to open.
   */
  host?: string
  /** Default 4750; 0 picks a free port (read it from `url`). */
  port?: number
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  token?: string
  /** Extra `Host` names to accept (a DNS name the server is reached by); loopback names always are. */
  allowedHosts?: string[]
  /**
   * Extra browser origins to accept, exactly (`https://console.example.com`). A request with an
   * `Origin` header must name this server exactly (scheme, host and the bound port) or one of these.
   */
  allowedOrigins?: string[]
  /**
   * A session with no request or event stream open for this long is closed (default 30 minutes):
   * a client that vanished without ending its session must not hold a server and a turn forever.
   */
  sessionIdleMs?: number
  /**
   * At most this many sessions at once (default 64). A new client past it reclaims the least
   * recently used session that has no request in flight; only when every session is busy is it
   * answered 503. Each session holds a server and a turn.
   */
  maxSessions?: number
  /**
   * Answers requests for paths other than `/mcp` (the console) and returns `true`, or `false` to
   * leave them unanswered (404). Called after the `Host` and exact `Origin` checks, before the
   * bearer token check: the handler authenticates its own requests.
   */
  routes?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>
}

/** A running HTTP endpoint. */
export interface McpHttpServer {
  /** The endpoint's URL to share: the first of `urls`. */
  readonly url: string
  /**
   * Every URL a person can open: the bound host's, or on a wildcard bind this machine's first
   * external address and `127.0.0.1` (never `0.0.0.0`, which no browser can reach).
   */
  readonly urls: readonly string[]
  close(): Promise<void>
}

const PATH = '/mcp'
const MAX_BODY_BYTES = 4 * 1024 * 1024

const DEFAULT_SESSION_IDLE_MS = 30 * 60_000
const DEFAULT_MAX_SESSIONS = 64

/**
 * Serves the live generation over streamable HTTP at `http://<host>:<port>/mcp`, one MCP session
 * (and SDK server) per client (see `HttpSessions` for how a full table makes room). Every request's
 * `Host` must name this server and its `Origin`, when it has one, must be this server's origin
 * exactly (DNS rebinding), then carry the bearer token when one is configured (compared in
 * constant time).
 * `close()` ends every session (aborting running calls, which are still journaled) and the listener.
 */
export async function serveHttp(root: Root, options: McpHttpOptions): Promise<McpHttpServer> {
  const host = options.host ?? '127.0.0.1'
  const port = options.port ?? 4750
  const token = options.token?.trim() || undefined
  // A header carries one token without spaces: a token with them could never be presented.
  if (token !== undefined && /\s/.test(token)) {
    throw new SeamError('INVALID_OPTIONS', 'the bearer token must not contain white space', { hint: 'use a token of letters, digits and punctuation' })
  }
  if (!isLoopback(host) && !token) {
    throw new SeamError('INVALID_OPTIONS', `serving MCP on ${host}, which is not a loopback address, needs a bearer token`, {
      hint: 'pass a token, or serve on 127.0.0.1',
    })
  }
  const expected = token === undefined ? undefined : digest(token)
  const allowed = allowedHostnames(host, options.allowedHosts ?? [])
  const log = options.log ?? (() => {})
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS
  if (!Number.isSafeInteger(maxSessions) || maxSessions < 1) {
    throw new SeamError('INVALID_OPTIONS', `maxSessions must be a positive integer, got ${String(options.maxSessions)}`)
  }
  const limits = resolveLimits(options)
  const bridge = new McpBridge(root, options)
  const sessions = new HttpSessions({ max: maxSessions, idleMs, log })
  // The 2026-07-28 era, stateless: a server per request, changes on `subscriptions/listen` streams.
  // 2025-era requests are this endpoint's own sessionful serving, below, never the SDK's fallback.
  const modern = createMcpHandler(bridge.statelessFactory(), {
    legacy: 'reject',
    maxRequestBodySize: MAX_BODY_BYTES,
    onerror: (error) => log(`mcp http: ${error.message}`),
  })
  bridge.onChange(({ tools, prompts, resources, updated }) => {
    if (tools) modern.notify.toolsChanged()
    if (prompts) modern.notify.promptsChanged()
    if (resources) modern.notify.resourcesChanged()
    for (const uri of updated) modern.notify.resourceUpdated(uri)
  })
  // Known once the port is bound (it may be 0 until then).
  let origins = new Set<string>()
  let closing: Promise<void> | undefined
  const sweeper = setInterval(() => sessions.sweep(), Math.max(10, Math.min(60_000, Math.floor(idleMs / 4))))
  sweeper.unref()

  const http = createServer(limits.bounds, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`mcp http: request failed: ${error instanceof Error ? error.message : String(error)}`)
      if (!res.headersSent) reply(res, 500, 'Internal server error')
      else res.destroy()
    })
  })

  capConnectionsPerClient(http, limits.maxConnectionsPerClient, log)

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const hostCheck = validateHostHeader(req.headers.host, allowed)
    if (!hostCheck.ok) return reply(res, 403, hostCheck.message)
    const origin = req.headers.origin
    if (origin !== undefined && !origins.has(origin)) return reply(res, 403, `Forbidden: origin ${JSON.stringify(origin.slice(0, 200))} is not allowed`)
    const mcp = new URL(req.url ?? '/', 'http://localhost').pathname === PATH
    if (options.routes && !mcp && (await options.routes(req, res))) return
    if (expected && !bearerMatches(req.headers.authorization, expected)) {
      log(`mcp http: refused a request without a valid bearer token from ${req.socket.remoteAddress ?? 'unknown'}`)
      return reply(res, 401, 'Unauthorized: a valid bearer token is required', { 'www-authenticate': 'Bearer' })
    }
    if (!mcp) return reply(res, 404, `Not found: MCP is served at ${PATH}`)
    if (closing) return reply(res, 503, 'The server is shutting down')

    const sessionId = header(req, 'mcp-session-id')
    // A POST outside any session may be a 2026-07-28 request: read it first to tell.
    let early: Buffer | undefined
    if (sessionId === undefined && req.method === 'POST') {
      const body = await readBody(req).catch((error: unknown) => error as Error)
      if (body instanceof Error) return void res.destroy()
      if (body === 'too-large') return reply(res, 413, 'Request body too large', { connection: 'close' })
      const parsed = parseJson(body)
      if (parsed !== INVALID && !(await isLegacyRequest(webRequest(req, body, undefined), parsed))) {
        const mismatch = await paramHeadersRefusal(parsed, toHeaders(req))
        if (mismatch !== undefined) {
          log(`mcp http: refused a tools/call: ${mismatch.message}`)
          return replyError(res, 400, HEADER_MISMATCH, mismatch.message, mismatch.id)
        }
        const abort = new AbortController()
        res.on('close', () => abort.abort())
        return send(res, await modern.fetch(webRequest(req, body, abort.signal), { parsedBody: parsed }))
      }
      early = body
    }
    let session = sessionId === undefined ? undefined : sessions.get(sessionId)
    if (sessionId !== undefined && !session) return reply(res, 404, 'Session not found')
    // Counted before a slow upload: the session is busy (never reclaimed, never expired) until answered.
    const eventStream = req.method === 'GET'
    if (session) {
      sessions.touch(session)
      if (eventStream) session.streams += 1
      else session.requests += 1
    }
    const body = early ?? (req.method === 'POST' ? await readBody(req).catch((error: unknown) => error as Error) : undefined)
    if (body === 'too-large' || body instanceof Error) {
      if (session) release(session, eventStream)
      if (body instanceof Error) return void res.destroy()
      return reply(res, 413, 'Request body too large', { connection: 'close' })
    }
    if (!session) {
      if (!sessions.makeRoom()) {
        log(`mcp http: refused a new session: all ${maxSessions} are busy`)
        return reply(res, 503, `Too many sessions (${maxSessions}), all busy; try again later`, { 'retry-after': '5' })
      }
      session = await openSession()
      session.requests += 1
    }
    const current = session
    const abort = new AbortController()
    res.on('close', () => {
      abort.abort()
      release(current, eventStream)
      // Closed before its answer was written: the client is gone, and with no event store the answer
      // can never be redelivered, so the POST's requests are cancelled (their calls settle ABORTED).
      if (!res.writableFinished && body !== undefined) cancelRequests(current, req, body)
    })
    const response = await session.transport.handleRequest(webRequest(req, body, abort.signal))
    // A request that did not initialize a session (rejected by the transport) leaves nothing behind.
    if (session.transport.sessionId === undefined) await session.transport.close()
    send(res, response)
  }

  /** A 2026-07-28 `tools/call` whose `Mcp-Param-*` headers disagree with its arguments (see `paramHeaderMismatch`). */
  async function paramHeadersRefusal(message: unknown, headers: Headers): Promise<{ message: string; id: unknown } | undefined> {
    const { method, params, id } = (message ?? {}) as { method?: unknown; params?: { name?: unknown; arguments?: unknown }; id?: unknown }
    if (method !== 'tools/call' || typeof params?.name !== 'string') return undefined
    const tool = await bridge.catalog().then(
      (catalog) => catalog.tools.find((candidate) => candidate.name === params.name),
      () => undefined,
    )
    const mismatch = tool === undefined ? undefined : paramHeaderMismatch(tool.inputSchema, params.arguments, headers)
    return mismatch === undefined ? undefined : { message: `Bad Request: the request headers and body disagree: ${mismatch}`, id: id ?? null }
  }

  /** Cancels the JSON-RPC requests in `body` as the client would, with `notifications/cancelled`. */
  function cancelRequests(session: HttpSession, req: IncomingMessage, body: Buffer): void {
    const ids = requestIds(parseJson(body))
    if (ids.length === 0 || sessions.get(session.id) !== session) return
    const headers = toHeaders(req)
    headers.delete('content-length')
    for (const requestId of ids) {
      const notice = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the client closed the request stream' } })
      const cancel = new Request(new URL(PATH, 'http://localhost'), { method: 'POST', headers, body: notice })
      session.transport.handleRequest(cancel).catch((error: unknown) => log(`mcp http: could not cancel a request: ${error instanceof Error ? error.message : String(error)}`))
    }
  }

  function release(session: HttpSession, stream: boolean): void {
    if (stream) session.streams -= 1
    else session.requests -= 1
    session.lastSeen = Date.now()
  }

  async function openSession(): Promise<HttpSession> {
    const id = randomUUID()
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => {
        sessions.add(session)
        log(`mcp http: session ${id.slice(0, 8)} opened`)
      },
    })
    const session: HttpSession = { id, transport, requests: 0, streams: 0, lastSeen: Date.now() }
    const seamSession = bridge.sessionFor(id)
    const server = bridge.open(seamSession, () => {
      if (sessions.delete(id)) log(`mcp http: session ${id.slice(0, 8)} closed`)
      bridge.endSession(seamSession)
    })
    await server.connect(transport)
    return session
  }

  try {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject)
      http.listen(port, host, () => {
        http.off('error', reject)
        resolve()
      })
    })
  } catch (error) {
    clearInterval(sweeper)
    await bridge.close()
    const code = (error as { code?: unknown }).code
    throw new SeamError('LISTEN_FAILED', `cannot serve MCP on ${host}:${port}${typeof code === 'string' ? ` (${code})` : ''}`, {
      cause: error,
      hint: code === 'EADDRINUSE' ? 'the port is taken: pick another one, or 0 for any free port' : undefined,
    })
  }
  const bound = (http.address() as AddressInfo).port
  origins = new Set([...allowed.map((name) => `http://${name}:${bound}`), ...(options.allowedOrigins ?? [])])
  const urls = reachableUrls(host, bound, PATH)
  const url = urls[0]!
  log(`mcp http: serving ${urls.join(' and ')}${token ? ' (bearer token required)' : ''}`)
  return {
    url,
    urls,
    close() {
      closing ??= (async () => {
        clearInterval(sweeper)
        const stopped = new Promise<void>((resolve) => http.close(() => resolve()))
        await modern.close()
        await bridge.close()
        http.closeAllConnections()
        await stopped
      })()
      return closing
    },
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/** Compares digests, so neither the token's length nor its prefix leaks through timing. */
function bearerMatches(authorization: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')
  const same = timingSafeEqual(digest(match?.[1] ?? ''), expected)
  return match !== null && same
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

const INVALID = Symbol('invalid JSON')

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'))
  } catch {
    return INVALID
  }
}

/** The ids of the requests (not notifications or responses) in a JSON-RPC message or batch. */
function requestIds(message: unknown): (string | number)[] {
  const messages = Array.isArray(message) ? message : [message]
  return messages.flatMap((m) => {
    const { id, method } = (m ?? {}) as { id?: unknown; method?: unknown }
    return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? [id] : []
  })
}

function webRequest(req: IncomingMessage, body: Buffer | undefined, signal: AbortSignal | undefined): Request {
  return new Request(new URL(req.url ?? PATH, 'http://localhost'), { method: req.method, headers: toHeaders(req), body, signal })
}

/** Writes a web `Response` (a JSON body or an SSE stream) to the node response. */
function send(res: ServerResponse, response: Response): void {
  res.writeHead(response.status, Object.fromEntries(response.headers))
  if (!response.body) {
    res.end()
    return
  }
  const stream = Readable.fromWeb(response.body as NodeReadableStream)
  res.on('close', () => stream.destroy())
  stream.pipe(res)
}

function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers()
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value)
  }
  return headers
}

async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
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
function reply(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  replyError(res, status, -32000, message, null, headers)
}

function replyError(res: ServerResponse, status: number, code: number, message: string, id: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }))
}

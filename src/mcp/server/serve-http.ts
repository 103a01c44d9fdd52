import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  createMcpHandler,
  isLegacyRequest,
  validateHostHeader,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import { SeamError } from '../../errors.js'
import type { Root } from '../../runtime/root.js'
import { bearerMatches, digest } from './http-bearer.js'
import { allowedHostnames, reachableUrls } from './http-hosts.js'
import { SessionEventStore } from './http-events.js'
import { capConnectionsPerClient, resolveLimits } from './http-limits.js'
import { checkHttpOptions, type McpHttpOptions } from './http-options.js'
import { StreamResumes } from './http-resume.js'
import { type HttpSession, HttpSessions } from './http-sessions.js'
import { header, INVALID, MAX_BODY_BYTES, PATH, parseJson, readBody, reply, replyError, send, toHeaders, webRequest } from './http-wire.js'
import { HEADER_MISMATCH, paramHeaderMismatch } from './param-headers.js'
import { McpBridge } from './serve-bridge.js'

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

/** The `retry` a POST stream's priming event tells a client to wait before it reconnects. */
const RETRY_MS = 1_000

/**
 * Serves the live generation over streamable HTTP at `http://<host>:<port>/mcp`, one MCP session
 * (and SDK server) per client (see `HttpSessions` for how a full table makes room). Every request's
 * `Host` must name this server and its `Origin`, when it has one, must be this server's origin
 * exactly (DNS rebinding), then carry the bearer token when one is configured (compared in
 * constant time).
 * `close()` ends every session (aborting running calls, which are still journaled) and the listener.
 *
 * This file holds the routing of a request and the 2025-era sessions' lifecycle; the options and
 * their checks are http-options.ts, the node:http plumbing http-wire.ts, the token check
 * http-bearer.ts, and the cancels of a closed stream http-resume.ts.
 */
export async function serveHttp(root: Root, options: McpHttpOptions): Promise<McpHttpServer> {
  const { host, port, token, idleMs, maxSessions, resumeMs } = checkHttpOptions(options)
  const expected = token === undefined ? undefined : digest(token)
  const allowed = allowedHostnames(host, options.allowedHosts ?? [])
  const log = options.log ?? (() => {})
  const limits = resolveLimits(options)
  const bridge = new McpBridge(root, options)
  const sessions = new HttpSessions({ max: maxSessions, idleMs, log })
  const resumes = new StreamResumes(resumeMs, sessions, log)
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
      // Closed before its answer was written: unless the client reconnects (Last-Event-ID) in time to
      // be delivered the answer from the event store, the POST's requests are cancelled (ABORTED).
      if (!res.writableFinished && body !== undefined) resumes.cancelUnlessResumed(current, req, body)
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

  function release(session: HttpSession, stream: boolean): void {
    if (stream) session.streams -= 1
    else session.requests -= 1
    session.lastSeen = Date.now()
  }

  async function openSession(): Promise<HttpSession> {
    const id = randomUUID()
    // A client resuming a stream is back: the cancels waiting for it are dropped.
    const eventStore = new SessionEventStore(() => resumes.resumed(session))
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      eventStore,
      retryInterval: RETRY_MS,
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

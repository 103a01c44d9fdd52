import type { IncomingMessage, ServerResponse } from 'node:http'
import { SeamError } from '../../errors.js'
import { isLoopback } from './http-hosts.js'
import type { HttpLimits } from './http-limits.js'
import type { McpServeOptions } from './serve-options.js'

/** The options of `serveHttp`, their defaults, and the checks that refuse them before anything is bound. */

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
  /**
   * A 2025-era POST stream that closes before its answer was written: its calls are cancelled
   * unless the client reconnects (a GET with `Last-Event-ID`) within this long (default 10 s; 0
   * cancels at once). The session's event store then delivers what the stream missed.
   */
  streamResumeMs?: number
}

const DEFAULT_SESSION_IDLE_MS = 30 * 60_000
const DEFAULT_STREAM_RESUME_MS = 10_000
const DEFAULT_MAX_SESSIONS = 64

/** `McpHttpOptions` with their defaults, checked (the bearer token trimmed; `undefined` when none). */
export interface CheckedHttpOptions {
  readonly host: string
  readonly port: number
  readonly token: string | undefined
  readonly idleMs: number
  readonly maxSessions: number
  readonly resumeMs: number
}

/** Applies the defaults; a token with white space, a non-loopback host without one, or a bad number is `INVALID_OPTIONS`. */
export function checkHttpOptions(options: McpHttpOptions): CheckedHttpOptions {
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
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS
  if (!Number.isSafeInteger(maxSessions) || maxSessions < 1) {
    throw new SeamError('INVALID_OPTIONS', `maxSessions must be a positive integer, got ${String(options.maxSessions)}`)
  }
  const resumeMs = options.streamResumeMs ?? DEFAULT_STREAM_RESUME_MS
  if (!(Number.isFinite(resumeMs) && resumeMs >= 0 && resumeMs <= 0x7fff_ffff)) {
    throw new SeamError('INVALID_OPTIONS', `streamResumeMs must be a number of milliseconds from 0 to 2147483647, got ${String(options.streamResumeMs)}`)
  }
  return { host, port, token, idleMs, maxSessions, resumeMs }
}

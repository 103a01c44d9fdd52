import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { SeamError } from '../../errors.js'

/** How long a client may take to send a request, and how many connections it may hold open. */
export interface HttpLimits {
  /**
   * A connection that has not sent a request's complete headers this long after it opened is
   * answered 408 and closed (default 10 s).
   */
  headersTimeoutMs?: number
  /** A request whose body has not fully arrived this long after it began is answered 408 and closed (default 30 s). */
  requestTimeoutMs?: number
  /**
   * At most this many open connections from one client address (default 64); a connection past it
   * is closed at once. Open event streams count: a client holds one per MCP session listening.
   */
  maxConnectionsPerClient?: number
}

const DEFAULT_HEADERS_TIMEOUT_MS = 10_000
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 64

/** Checked limits: the `createServer` options that bound a request's arrival (node checks them on an interval) and the per-client cap. */
export interface ResolvedLimits {
  readonly bounds: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number }
  readonly maxConnectionsPerClient: number
}

/** Validates `limits` (`INVALID_OPTIONS`) and fills in the defaults. */
export function resolveLimits(limits: HttpLimits): ResolvedLimits {
  const max = limits.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new SeamError('INVALID_OPTIONS', `maxConnectionsPerClient must be a positive integer, got ${String(limits.maxConnectionsPerClient)}`)
  }
  return { bounds: requestBounds(limits), maxConnectionsPerClient: max }
}

function requestBounds(limits: HttpLimits): ResolvedLimits['bounds'] {
  const headersTimeout = positive('headersTimeoutMs', limits.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS)
  const requestTimeout = positive('requestTimeoutMs', limits.requestTimeoutMs ?? Math.max(DEFAULT_REQUEST_TIMEOUT_MS, headersTimeout))
  if (headersTimeout > requestTimeout) {
    throw new SeamError('INVALID_OPTIONS', `headersTimeoutMs (${headersTimeout}) must not exceed requestTimeoutMs (${requestTimeout})`)
  }
  // Checked at a tenth of the shorter bound, so a connection lives at most ~10 % past it.
  const connectionsCheckingInterval = Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 10)))
  return { headersTimeout, requestTimeout, connectionsCheckingInterval }
}

/**
 * Closes a new connection at once when its client address already holds `max` open ones: a client
 * that opens connections and never finishes a request cannot exhaust the server's sockets before
 * the timeouts reclaim them.
 */
export function capConnectionsPerClient(server: Server, max: number, log: (line: string) => void): void {
  const open = new Map<string, number>()
  /** Addresses told about since they were last under the cap: a flood must not flood the log too. */
  const warned = new Set<string>()
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown'
    const count = open.get(address) ?? 0
    if (count >= max) {
      if (!warned.has(address)) log(`mcp http: closing new connections from ${address}: it holds ${max} open already`)
      warned.add(address)
      socket.destroy()
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      warned.delete(address)
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new SeamError('INVALID_OPTIONS', `${name} must be a positive number of milliseconds, got ${String(value)}`)
  return value
}

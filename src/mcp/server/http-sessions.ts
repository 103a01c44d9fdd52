import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'

/** One MCP session over HTTP: its SDK transport and what it has open right now. */
export interface HttpSession {
  readonly id: string
  readonly transport: WebStandardStreamableHTTPServerTransport
  /** POST requests (calls, lists) being answered. A session with one is never reclaimed. */
  requests: number
  /** GET event streams open: the client is still there, but it is waiting, not working. */
  streams: number
  lastSeen: number
}

export interface HttpSessionsOptions {
  /** At most this many sessions at once. */
  readonly max: number
  /** A session with nothing open for this long is ended by `sweep()`. */
  readonly idleMs: number
  readonly log: (line: string) => void
}

/**
 * The open sessions of one HTTP endpoint, least recently used first. Clients often end without a
 * DELETE (the official client's `close()` sends none), so a full table never simply refuses a new
 * client: the least recently used session with no request in flight is reclaimed (its client, if
 * it ever comes back, gets 404 and initializes again, as the spec says). Only when every session
 * is in the middle of a request is a new one refused. Idle sessions also expire after `idleMs`.
 */
export class HttpSessions {
  readonly #options: HttpSessionsOptions
  /** Insertion order is recency: `touch` moves a session to the end. */
  readonly #sessions = new Map<string, HttpSession>()

  constructor(options: HttpSessionsOptions) {
    this.#options = options
  }

  get size(): number {
    return this.#sessions.size
  }

  get(id: string): HttpSession | undefined {
    return this.#sessions.get(id)
  }

  add(session: HttpSession): void {
    this.#sessions.set(session.id, session)
  }

  /** Forgets a session whose transport closed (a DELETE, a reclaim, an expiry); true when it was here. */
  delete(id: string): boolean {
    return this.#sessions.delete(id)
  }

  /** The session was just used: it becomes the most recently used. */
  touch(session: HttpSession): void {
    session.lastSeen = Date.now()
    if (this.#sessions.get(session.id) !== session) return
    this.#sessions.delete(session.id)
    this.#sessions.set(session.id, session)
  }

  /**
   * Makes room for one more session: reclaims least recently used sessions with no request in
   * flight until there is room. False when every session is busy.
   */
  makeRoom(): boolean {
    for (const session of this.#sessions.values()) {
      if (this.#sessions.size < this.#options.max) return true
      if (session.requests > 0) continue
      this.#end(session, 'reclaimed for a new client (least recently used)')
    }
    return this.#sessions.size < this.#options.max
  }

  /** Ends every session with nothing open for `idleMs`. */
  sweep(now = Date.now()): void {
    for (const session of this.#sessions.values()) {
      if (session.requests > 0 || session.streams > 0 || now - session.lastSeen < this.#options.idleMs) continue
      this.#end(session, `expired after ${Math.round(this.#options.idleMs / 1000)} s idle`)
    }
  }

  #end(session: HttpSession, why: string): void {
    this.#sessions.delete(session.id)
    this.#options.log(`mcp http: session ${session.id.slice(0, 8)} ${why}`)
    session.transport.close().catch(() => {})
  }
}

import type { IncomingMessage } from 'node:http'
import type { HttpSession, HttpSessions } from './http-sessions.js'
import { PATH, parseJson, requestIds, toHeaders } from './http-wire.js'

/**
 * The requests of a 2025-era POST stream that closed before its answer was written: cancelled as
 * the client would (`notifications/cancelled`) unless it reconnects (a GET with `Last-Event-ID`)
 * within `resumeMs` (0 cancels at once); the session's event store then delivers what it missed.
 */
export class StreamResumes {
  readonly #resumeMs: number
  readonly #sessions: HttpSessions
  readonly #log: (line: string) => void
  /** The cancels waiting for a closed stream's client to come back, per session. */
  readonly #waiting = new WeakMap<HttpSession, Set<NodeJS.Timeout>>()

  constructor(resumeMs: number, sessions: HttpSessions, log: (line: string) => void) {
    this.#resumeMs = resumeMs
    this.#sessions = sessions
    this.#log = log
  }

  /** `body`'s requests on `session` are cancelled in `resumeMs`, unless its client resumes a stream first. */
  cancelUnlessResumed(session: HttpSession, req: IncomingMessage, body: Buffer): void {
    if (this.#resumeMs === 0) {
      this.#cancelRequests(session, req, body)
      return
    }
    const timers = this.#waiting.get(session) ?? new Set<NodeJS.Timeout>()
    this.#waiting.set(session, timers)
    const timer = setTimeout(() => {
      timers.delete(timer)
      this.#cancelRequests(session, req, body)
    }, this.#resumeMs)
    timer.unref()
    timers.add(timer)
  }

  /** `session`'s client resumed a stream: it is back, and the cancels waiting for it are dropped. */
  resumed(session: HttpSession): void {
    for (const timer of this.#waiting.get(session) ?? []) clearTimeout(timer)
    this.#waiting.delete(session)
  }

  /** Cancels the JSON-RPC requests in `body` as the client would, with `notifications/cancelled`. */
  #cancelRequests(session: HttpSession, req: IncomingMessage, body: Buffer): void {
    const ids = requestIds(parseJson(body))
    if (ids.length === 0 || this.#sessions.get(session.id) !== session) return
    const headers = toHeaders(req)
    headers.delete('content-length')
    for (const requestId of ids) {
      const notice = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the client closed the request stream' } })
      const cancel = new Request(new URL(PATH, 'http://localhost'), { method: 'POST', headers, body: notice })
      session.transport.handleRequest(cancel).catch((error: unknown) => this.#log(`mcp http: could not cancel a request: ${error instanceof Error ? error.message : String(error)}`))
    }
  }
}

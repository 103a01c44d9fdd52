import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const COOKIE = 'seam_console'

export type Verdict = { readonly ok: true } | { readonly ok: false; readonly status: 401 | 403 | 415; readonly message: string }

const OK: Verdict = { ok: true }

/**
 * Who may use the console. The `Host` and `Origin` of every request were already checked against
 * the server's own names (DNS rebinding) by the HTTP server; on top of that:
 *
 * - With a token (any bind but loopback), a request must carry the console's session cookie, set by
 *   the one-time login URL the terminal prints, or `Authorization: Bearer <token>`, the MCP token.
 * - A request that changes something (POST) must come from the console's own page: an `Origin`
 *   naming exactly this server (scheme, host and port), no cross-site `Sec-Fetch-Site`, and a JSON
 *   body (which a cross-site form cannot send without a preflight).
 */
export class ConsoleGuard {
  readonly #token: Buffer | undefined
  readonly #codes = new Set<string>()
  readonly #sessions = new Set<string>()

  constructor(token: string | undefined) {
    this.#token = token === undefined ? undefined : digest(token)
  }

  get protected(): boolean {
    return this.#token !== undefined
  }

  /** A code for one login: `/login?code=<code>` sets the session cookie once, then the code is spent. */
  issueLoginCode(): string {
    const code = randomBytes(18).toString('base64url')
    this.#codes.add(code)
    return code
  }

  /** Spends `code`; the `Set-Cookie` value of a new session, or `undefined` for a code not (or no longer) valid. */
  login(code: string | null): string | undefined {
    if (code === null || !this.#codes.delete(code)) return undefined
    const session = randomBytes(24).toString('base64url')
    this.#sessions.add(session)
    return `${COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/`
  }

  check(req: IncomingMessage, changes: boolean): Verdict {
    if (this.#token !== undefined && !this.#authenticated(req)) {
      return { ok: false, status: 401, message: 'open the one-time console URL the terminal printed, or send the bearer token' }
    }
    if (!changes) return OK
    const host = req.headers.host
    const origin = req.headers.origin
    if (origin === undefined || host === undefined || origin !== `http://${host}`) {
      return { ok: false, status: 403, message: 'a request that changes something must come from the console page itself (Origin)' }
    }
    const site = req.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin') return { ok: false, status: 403, message: `refused a ${site} request` }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return { ok: false, status: 415, message: 'send JSON' }
    return OK
  }

  #authenticated(req: IncomingMessage): boolean {
    const session = cookie(req.headers.cookie, COOKIE)
    if (session !== undefined && this.#sessions.has(session)) return true
    const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '')?.[1]
    return bearer !== undefined && timingSafeEqual(digest(bearer), this.#token!)
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=')
    if (key === name) return value.join('=')
  }
  return undefined
}

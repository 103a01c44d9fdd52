import { messageOf } from '../../errors.js'
import { isStdioTransport, type McpTransportOptions } from './options.js'

/** Replaces every known secret in a text with `***`. */
export type Redactor = (text: string) => string

const MIN_SECRET_LENGTH = 4
const MIN_TOKEN_LENGTH = 6

/**
 * Builds the redactor for one transport. Secrets are the env values (set or passed through) and
 * header values the host passed (and the bearer-style tokens inside them), plus the URL's credentials, query values and
 * token-like path segments: a remote server may echo any of them back in an error body or on stderr.
 */
export function redactorFor(transport: McpTransportOptions): Redactor {
  const secrets = new Set<string>()
  const add = (value: string | undefined) => {
    if (!value || value.length < MIN_SECRET_LENGTH) return
    secrets.add(value)
    for (const token of value.split(/\s+/)) if (token.length >= MIN_TOKEN_LENGTH) secrets.add(token)
  }
  if (isStdioTransport(transport)) {
    for (const value of Object.values(transport.env ?? {})) add(value)
    for (const name of transport.passEnv ?? []) add(process.env[name])
  } else {
    for (const value of Object.values(transport.headers ?? {})) add(value)
    try {
      const url = new URL(transport.url)
      for (const credential of [url.username, url.password]) {
        add(decodeOrKeep(credential))
        add(credential)
      }
      // A token in the path (`/api/mcp/s/<token>/mcp`, webhook-style `/T0123/B0456/<token>`).
      for (const segment of url.pathname.split('/')) {
        if (!tokenLike(decodeOrKeep(segment))) continue
        add(decodeOrKeep(segment))
        add(segment)
      }
      for (const value of url.searchParams.values()) add(value)
      // As written in the URL too: a message quoting the URL carries the percent-encoded form.
      for (const pair of url.search.slice(1).split('&')) add(pair.slice(pair.indexOf('=') + 1))
    } catch {
      // An invalid URL fails at connect time with its own message.
    }
  }
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...secrets].sort((a, b) => b.length - a.length)
  return (text) => {
    let out = text
    for (const secret of ordered) out = out.split(secret).join('***')
    return out
  }
}

/**
 * A path segment that looks generated rather than named: 16 characters or more, letters and digits
 * both, no white space. Hiding an id that is not secret costs a message some detail; the other way
 * round leaks a credential.
 */
function tokenLike(segment: string): boolean {
  return segment.length >= 16 && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment) && !/\s/.test(segment)
}

function decodeOrKeep(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** A foreign error's message, with its cause's code when it has one ("fetch failed (ECONNREFUSED)"), redacted. */
export function safeMessage(error: unknown, redact: Redactor): string {
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code
  const message = messageOf(error)
  return redact(typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message)
}

/**
 * A redacted stand-in for a foreign error, safe to attach as `cause`: loggers print the cause chain,
 * and an SDK error message may carry a server's reply verbatim.
 */
export function redactedError(error: unknown, redact: Redactor): Error {
  const copy = new Error(safeMessage(error, redact))
  if (error instanceof Error) copy.name = error.name
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' || typeof code === 'number') Object.assign(copy, { code })
  return copy
}

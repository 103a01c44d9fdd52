/**
 * The one redactor: every string the runtime journals (arguments, approval summaries and reasons,
 * result content) or logs passes through `redactText`. It removes secrets by shape and by value:
 *
 * 1. values under secret-looking keys, in JSON (also truncated or malformed), `key=value` pairs
 *    (query strings, connection strings like `Server=db;Password=…`) and `key: value` lines;
 * 2. `Bearer`/`Basic` credentials, and header pairs (`["Authorization","…"]`);
 * 3. the password of a URL with credentials (`postgres://user:…@host`);
 * 4. known secret values (`known-secrets.ts`): those of this process's own credential-looking
 *    environment variables and the passwords inside them, and every value a host registers with
 *    `registerSecret`, wherever they appear.
 *
 * A pair whose key is not secret is looked into: a URL's query (`url=https://…?api_key=…`) or a
 * `KEY=value` line inside a JSON string is found there. A false positive only hides text.
 */
import { isSecretKey, REDACTED, scrubValues } from './known-secrets.js'

export { isSecretKey, knowsSecrets, looksLikeCredentials, REDACTED, registerSecret, rescanEnvironment, scrubValues } from './known-secrets.js'

/** Text that may hold something to redact; anything else is returned as is without a regex pass. */
// pass|pwd|pw\b|secret|session|signature|token|key|auth|cookie|credential|bearer|basic|dsn|://|\u, with the
// shared prefixes factored out: V8 scans an alternation of many words case-insensitively about twice as fast so.
const MAYBE = /p(?:ass|wd|w\b)|s(?:e(?:cret|ssion)|ignature)|token|key|auth|c(?:ookie|redential)|b(?:earer|asic)|dsn|:\/\/|\\u/i
/**
 * `key` `:` or `=` then a value: a quoted string (possibly cut short, as in truncated JSON) or a bare
 * run up to a separator. The key may be quoted too; `isSecretKey` decides.
 */
const KEY_VALUE = /(["']?)([A-Za-z_][\w.-]{0,63})\1(\s*[:=]\s*)("(?:[^"\\\n]|\\.)*(?:"|$)|'(?:[^'\\\n]|\\.)*(?:'|$)|[^\s"',;&}\]]+)/g
const SCHEME_CREDENTIALS = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}/gi
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^/\s:@"']*):([^/\s@"']+)@/gi
/** A header written as a pair: `["Authorization", "…"]`, `["X-Api-Key", "…"]`. */
const PAIR = /\[\s*"((?:proxy-)?authorization|(?:set-)?cookie|x-[\w-]{0,60})"\s*,\s*"((?:[^"\\]|\\.)*)"/gi
/** Bare JSON literals under a secret key carry nothing to hide (and stay valid JSON). */
const LITERALS: ReadonlySet<string> = new Set(['null', 'true', 'false'])

/** `text` with every secret it holds replaced by `[redacted]` (see the module comment). */
export function redactText(text: string): string {
  let out = text
  if (MAYBE.test(out)) {
    // Schemes first: `Authorization: Basic …` must lose the credential, not only the word `Basic`.
    out = out.replace(SCHEME_CREDENTIALS, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    out = out.replace(PAIR, (match, key: string) => (isSecretKey(key) ? `["${key}","${REDACTED}"` : match))
    out = redactPairs(out)
    out = out.replace(URL_CREDENTIALS, (_match, prefix: string) => `${prefix}:${REDACTED}@`)
  }
  return scrubValues(out)
}

/** `text` with the values of its secret-keyed pairs redacted, looking into the values of the others. */
function redactPairs(text: string): string {
  return text.replace(KEY_VALUE, redactPair)
}

function redactPair(match: string, quote: string, key: string, separator: string, value: string): string {
  if (value === REDACTED || value === `"${REDACTED}"`) return match
  if (!isSecretKey(key) || LITERALS.has(value)) {
    // The value is shorter than the match, so this ends: `"url":"https://x/?api_key=…"` is found inside.
    const inner = redactPairs(value)
    return inner === value ? match : `${quote}${key}${quote}${separator}${inner}`
  }
  const quoted = value.startsWith('"') || value.startsWith("'") ? `${value[0]}${REDACTED}${value.length > 1 && value.endsWith(value[0]!) ? value[0] : ''}` : REDACTED
  return `${quote}${key}${quote}${separator}${quoted}`
}

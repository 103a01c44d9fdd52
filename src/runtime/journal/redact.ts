/**
 * The one redactor: every string the runtime journals (arguments, approval summaries and reasons,
 * result content) or logs passes through `redactText`. It removes secrets by shape and by value:
 *
 * 1. values under secret-looking keys, in JSON (also truncated or malformed), `key=value` pairs
 *    (query strings, connection strings like `Server=db;Password=…`) and `key: value` lines;
 * 2. `Bearer`/`Basic` credentials, and header pairs (`["Authorization","…"]`);
 * 3. the password of a URL with credentials (`postgres://user:…@host`);
 * 4. known secret values: those of this process's own credential-looking environment variables,
 *    and every value a host registers with `registerSecret`, wherever they appear.
 *
 * A false positive only hides text from the journal or a log line.
 */

export const REDACTED = '[redacted]'

/** Matched against a key lower-cased with everything but letters and digits removed. */
const SECRET_KEY =
  /pass(?:word|wd|phrase|code)|pass$|secret|token|apikey|accesskey|privatekey|authkey|authori[sz]ation|auth$|cookie|credential|bearer|session(?:id|key)|signature|dsn$/
const SECRET_EXACT: ReadonlySet<string> = new Set(['auth', 'pwd', 'pw'])

/**
 * Whether a key looks like it holds a secret (`apiKey`, `X-Api-Key`, `client_secret`, `db_pass`,
 * `passcode`, `x-auth`, `Authorization`, `refreshToken`, …).
 */
export function isSecretKey(key: string): boolean {
  const folded = key.toLowerCase().replace(/[^a-z0-9]/g, '')
  return SECRET_EXACT.has(folded) || SECRET_KEY.test(folded)
}

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

const registered = new Map<string, number>()
let fromEnvironment: readonly string[] | undefined

/**
 * Scrubs `value` from every journaled and logged string from now on (until the returned disposer
 * runs). For secrets a host holds that no pattern can recognise: a token read from a vault, a
 * generated password. Values shorter than 6 characters are refused (they would hide ordinary text).
 */
export function registerSecret(value: string): () => void {
  if (typeof value !== 'string' || value.length < 6) throw new TypeError('registerSecret: a secret must be a string of at least 6 characters')
  registered.set(value, (registered.get(value) ?? 0) + 1)
  let done = false
  return () => {
    if (done) return
    done = true
    const count = (registered.get(value) ?? 1) - 1
    if (count === 0) registered.delete(value)
    else registered.set(value, count)
  }
}

/** `text` with every secret it holds replaced by `[redacted]` (see the module comment). */
export function redactText(text: string): string {
  let out = text
  if (MAYBE.test(out)) {
    // Schemes first: `Authorization: Basic …` must lose the credential, not only the word `Basic`.
    out = out.replace(SCHEME_CREDENTIALS, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    out = out.replace(PAIR, (match, key: string) => (isSecretKey(key) ? `["${key}","${REDACTED}"` : match))
    out = out.replace(KEY_VALUE, (match, quote: string, key: string, separator: string, value: string) => {
      if (!isSecretKey(key) || LITERALS.has(value) || value === REDACTED || value === `"${REDACTED}"`) return match
      const quoted = value.startsWith('"') || value.startsWith("'") ? `${value[0]}${REDACTED}${value.length > 1 && value.endsWith(value[0]!) ? value[0] : ''}` : REDACTED
      return `${quote}${key}${quote}${separator}${quoted}`
    })
    out = out.replace(URL_CREDENTIALS, (_match, prefix: string) => `${prefix}:${REDACTED}@`)
  }
  return scrubValues(out)
}

/** Whether any secret value is known (`registerSecret`'s or the environment's): else `scrubValues` changes nothing. */
export function knowsSecrets(): boolean {
  return environmentSecrets().length > 0 || registered.size > 0
}

/** Replaces the known secret values (see `registerSecret` and the environment's) in `text`. */
export function scrubValues(text: string): string {
  let out = text
  // Index loops, and no iterator over `registered` while it is empty: this runs on every journaled string.
  const fromEnv = environmentSecrets()
  for (let index = 0; index < fromEnv.length; index += 1) {
    const value = fromEnv[index]!
    if (out.includes(value)) out = out.split(value).join(REDACTED)
  }
  if (registered.size > 0) for (const value of registered.keys()) if (out.includes(value)) out = out.split(value).join(REDACTED)
  return out
}

/** The shell's working folders: `PWD` reads like a password key, but holds a path every log prints. */
const SHELL_FOLDERS: ReadonlySet<string> = new Set(['PWD', 'OLDPWD'])

/** Reads the environment's secret values again on next use (a root does when it is created). */
export function rescanEnvironment(): void {
  fromEnvironment = undefined
}

/**
 * The values of this process's credential-looking environment variables (by name, or a value that
 * is a connection string or URL with credentials), read on first use. Short values are skipped:
 * `PGPASSWORD=x` would turn every `x` into a redaction.
 */
function environmentSecrets(): readonly string[] {
  if (fromEnvironment === undefined) {
    const values = new Set<string>()
    for (const [name, value] of Object.entries(process.env)) {
      if (value === undefined || value.length < 6 || SHELL_FOLDERS.has(name)) continue
      if (isSecretKey(name) || /_(?:KEY|PASS|PW)$/i.test(name) || looksLikeCredentials(value)) values.add(value)
    }
    // Longest first: a secret that contains another is scrubbed whole.
    fromEnvironment = [...values].sort((a, b) => b.length - a.length)
  }
  return fromEnvironment
}

/** A connection string or URL that carries a password (`Server=db;Password=…`, `redis://:pw@host`). */
export function looksLikeCredentials(value: string): boolean {
  return /(?:^|;)\s*(?:password|pwd)\s*=/i.test(value) || /^[a-z][a-z0-9+.-]*:\/\/[^/\s@]*:[^/\s@]+@/i.test(value)
}

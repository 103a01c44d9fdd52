/**
 * The process-wide set of secret values, the part of the one redactor (`redact.ts`) that no pattern
 * can find: the values of this process's credential-looking environment variables (read on first
 * use, again after `rescanEnvironment`), the passwords inside those that are URLs or connection
 * strings, and every value a host registers with `registerSecret`. Each value is also looked for as
 * JSON writes it inside a string and as a URL encodes it, the forms stores and pages carry.
 *
 * Every known value is compiled into one pattern (longest first), rebuilt only when the set changes:
 * scrubbing a string is one search whatever the number of secrets, and none at all when none is known.
 */

export const REDACTED = '[redacted]'

/** Shorter values are not secrets worth hiding: `PGPASSWORD=x` would turn every `x` into a redaction. */
const MIN_LENGTH = 6
/** The shell's working folders: `PWD` reads like a password key, but holds a path every log prints. */
const SHELL_FOLDERS: ReadonlySet<string> = new Set(['PWD', 'OLDPWD'])
const URL_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/\s@:]*:([^/\s@]+)@/i
const CONNECTION_PASSWORD = /(?:^|;)\s*(?:password|pwd)\s*=\s*("[^"]*"|'[^']*'|[^;]*)/gi

const registered = new Map<string, number>()
let fromEnvironment: readonly string[] | undefined
/** `undefined`: to be compiled; `null`: no secret value known. */
let compiled: RegExp | null | undefined
/** The same alternation without `g`: a test that finds nothing (the usual case) writes no `lastIndex` and is about 4× cheaper than a replace. */
let probe: RegExp = /$^/

/**
 * Scrubs `value` from every journaled, logged, served and printed string from now on (until the
 * returned disposer runs). For secrets a host holds that no pattern can recognise: a token read from
 * a vault, a generated password. Values shorter than 6 characters are refused (they would hide ordinary text).
 */
export function registerSecret(value: string): () => void {
  if (typeof value !== 'string' || value.length < MIN_LENGTH) throw new TypeError('registerSecret: a secret must be a string of at least 6 characters')
  registered.set(value, (registered.get(value) ?? 0) + 1)
  compiled = undefined
  let done = false
  return () => {
    if (done) return
    done = true
    const count = (registered.get(value) ?? 1) - 1
    if (count === 0) registered.delete(value)
    else registered.set(value, count)
    compiled = undefined
  }
}

/** Reads the environment's secret values again on next use (a root does when it is created). */
export function rescanEnvironment(): void {
  fromEnvironment = undefined
  compiled = undefined
}

/** Whether any secret value is known (`registerSecret`'s or the environment's): else `scrubValues` changes nothing. */
export function knowsSecrets(): boolean {
  return (compiled === undefined ? compile() : compiled) !== null
}

/** `text` with every known secret value (see the module comment) replaced by `[redacted]`. */
export function scrubValues(text: string): string {
  const pattern = compiled === undefined ? compile() : compiled
  return pattern === null || !probe.test(text) ? text : text.replace(pattern, REDACTED)
}

/** A connection string or URL that carries a password (`Server=db;Password=…`, `redis://:pw@host`). */
export function looksLikeCredentials(value: string): boolean {
  return /(?:^|;)\s*(?:password|pwd)\s*=/i.test(value) || /^[a-z][a-z0-9+.-]*:\/\/[^/\s@]*:[^/\s@]+@/i.test(value)
}

function compile(): RegExp | null {
  const forms = new Set<string>()
  const add = (value: string) => {
    if (value.length < MIN_LENGTH) return
    forms.add(value)
    forms.add(JSON.stringify(value).slice(1, -1))
    forms.add(encodeURIComponent(value))
  }
  for (const value of environmentSecrets()) add(value)
  for (const value of registered.keys()) add(value)
  // Longest first: a secret that contains another is scrubbed whole.
  const ordered = [...forms].filter((form) => form.length >= MIN_LENGTH).sort((a, b) => b.length - a.length)
  if (ordered.length === 0) {
    compiled = null
    return null
  }
  const source = ordered.map(escapeRegExp).join('|')
  probe = new RegExp(source)
  compiled = new RegExp(source, 'g')
  return compiled
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
}

/**
 * The values of this process's credential-looking environment variables (by name, or a value that
 * is a connection string or URL with credentials), and the passwords inside such values, which
 * text quotes alone (`password authentication failed for "…"`).
 */
function environmentSecrets(): readonly string[] {
  if (fromEnvironment !== undefined) return fromEnvironment
  const values = new Set<string>()
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || value.length < MIN_LENGTH || SHELL_FOLDERS.has(name)) continue
    const credentials = looksLikeCredentials(value)
    if (!credentials && !secretName(name)) continue
    values.add(value)
    if (!credentials) continue
    const password = URL_PASSWORD.exec(value)?.[1]
    if (password !== undefined) {
      values.add(password)
      values.add(decodeOrKeep(password))
    }
    for (const match of value.matchAll(CONNECTION_PASSWORD)) values.add(unquote(match[1]!.trim()))
  }
  fromEnvironment = [...values]
  return fromEnvironment
}

/**
 * Names that usually hold credentials: the journal's secret keys, and `*_KEY`, `*_PASS`, `*_PW`,
 * `*_PWD`, `*_PAT`. Narrower than `isSecretEnv` (which withholds variables from child processes):
 * a value scrubbed here disappears from every log and page, so `XDG_SESSION_TYPE=wayland` must not count.
 */
function secretName(name: string): boolean {
  return isSecretKey(name) || /_(?:KEY|PASS|PWD?|PAT)$/i.test(name)
}

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

function unquote(text: string): string {
  return text.length >= 2 && (text[0] === '"' || text[0] === "'") && text.endsWith(text[0]) ? text.slice(1, -1) : text
}

function decodeOrKeep(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

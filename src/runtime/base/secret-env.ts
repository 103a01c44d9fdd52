// Names that usually carry credentials, matched anywhere in the name (GITHUBTOKEN, AWS_SECRETS,
// MYSQL_PWD, STRIPE_KEY, npm_config__authToken, SENTRY_DSN). Over-matching only hides a harmless
// variable from a child process.
const SECRET_NAME = /TOKEN|SECRET|PASS|PWD|KEY|AUTH|CRED|COOKIE|BEARER|JWT|DSN|SESSION|SIGNATURE|(?:^|_)PAT(?:_|$)|SSH_AUTH_SOCK/i
// A value with credentials in a URL (`mongodb://user:pw@host`, `redis://:pw@host`).
const URL_CREDENTIALS = /^[a-z][a-z0-9+.-]*:\/\/[^/\s@]*:[^/\s@]*@/i
// A connection string with a password (`Server=db;User Id=sa;Password=…`), whatever its name.
const CONNECTION_PASSWORD = /(?:^|;)\s*(?:password|pwd)\s*=/i
// Names that look secret-ish but are safe and needed by ordinary commands.
const KEPT = new Set(['PATH', 'HOME', 'PWD', 'OLDPWD', 'KEYTIMEOUT', 'KEYMAP'])

/** Whether an environment variable (by its name, or a value holding URL credentials) looks like a secret. */
export function isSecretEnv(name: string, value = ''): boolean {
  if (KEPT.has(name.toUpperCase())) return false
  return SECRET_NAME.test(name) || URL_CREDENTIALS.test(value) || CONNECTION_PASSWORD.test(value)
}

/**
 * The environment a child process the host did not write gets (a command an agent runs, a mounted
 * MCP server): `env` minus the variables that look like credentials, except those named in `pass`.
 * `removed` lists the names withheld, sorted (names only: never log values).
 */
export function withoutSecrets(env: NodeJS.ProcessEnv, pass: readonly string[] = []): { env: Record<string, string>; removed: string[] } {
  const passed = new Set(pass)
  const kept: Record<string, string> = {}
  const removed: string[] = []
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (!passed.has(name) && isSecretEnv(name, value)) removed.push(name)
    else kept[name] = value
  }
  return { env: kept, removed: removed.sort() }
}

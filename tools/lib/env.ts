// Names that usually carry credentials, matched anywhere in the name (GITHUBTOKEN, AWS_SECRETS,
// MYSQL_PWD, STRIPE_KEY, npm_config__authToken, SENTRY_DSN). A command an agent runs gets none of them:
// it should not be able to print a token into the conversation (and the journal). Over-matching only
// hides a harmless variable from the command.
const SECRET_NAME = /TOKEN|SECRET|PASS|PWD|KEY|AUTH|CRED|COOKIE|BEARER|JWT|DSN|SESSION|SIGNATURE|(?:^|_)PAT(?:_|$)|SSH_AUTH_SOCK/i
// A value with credentials in a URL (`mongodb://user:pw@host`, `redis://:pw@host`).
const URL_CREDENTIALS = /^[a-z][a-z0-9+.-]*:\/\/[^/\s@]*:[^/\s@]*@/i
// A connection string with a password (`Server=db;User Id=sa;Password=…`), whatever its name.
const CONNECTION_PASSWORD = /(?:^|;)\s*(?:password|pwd)\s*=/i
// Names that look secret-ish but are safe and needed by ordinary commands.
const KEPT = new Set(['PATH', 'HOME', 'PWD', 'OLDPWD', 'KEYTIMEOUT', 'KEYMAP'])

/** Whether an environment variable (by its name, or a value holding URL credentials) looks like a secret. */
export function isSecretName(name: string, value = ''): boolean {
  if (KEPT.has(name.toUpperCase())) return false
  return SECRET_NAME.test(name) || URL_CREDENTIALS.test(value) || CONNECTION_PASSWORD.test(value)
}

/** The environment for a command: the host's minus secret-looking variables, colours off. */
export function commandEnv(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; removed: string[] } {
  const kept: NodeJS.ProcessEnv = {}
  const removed: string[] = []
  for (const [name, value] of Object.entries(env)) {
    if (isSecretName(name, value ?? '')) removed.push(name)
    else kept[name] = value
  }
  kept.NO_COLOR ??= '1'
  return { env: kept, removed: removed.sort() }
}

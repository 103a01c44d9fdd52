// Names that usually carry credentials. A command an agent runs gets none of them: it should not be
// able to print a token into the conversation (and the journal) by accident or on request.
const SECRET_NAME = /(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH|COOKIE)(?:_|$)|^(?:DATABASE_URL|PGPASSWORD|SSH_AUTH_SOCK)$/i

/** Whether an environment variable's name looks like it holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name)
}

/** The environment for a command: the host's minus secret-looking variables, colours off. */
export function commandEnv(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; removed: string[] } {
  const kept: NodeJS.ProcessEnv = {}
  const removed: string[] = []
  for (const [name, value] of Object.entries(env)) {
    if (isSecretName(name)) removed.push(name)
    else kept[name] = value
  }
  kept.NO_COLOR ??= '1'
  return { env: kept, removed: removed.sort() }
}

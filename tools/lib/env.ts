import { withoutSecrets } from 'seam-runtime'

/**
 * The environment for a command an agent runs: the host's minus secret-looking variables (the
 * runtime's own rule, the one a mounted MCP server's child gets too), colours off. A command should
 * not be able to print a token into the conversation (and the journal).
 */
export function commandEnv(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; removed: string[] } {
  const { env: kept, removed } = withoutSecrets(env)
  kept.NO_COLOR ??= '1'
  return { env: kept, removed }
}

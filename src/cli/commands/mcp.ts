import type { Command } from 'commander'
import { messageOf } from '../../errors.js'
import { EXIT } from '../errors.js'
import { follow } from '../follow.js'
import { type CliContext, line, styleFor } from '../io.js'
import { loadServe } from '../mcp-server.js'
import { logSink, untilStopped } from '../signals.js'
import { loadRuntime, openJournal, pluginDir } from '../workspace.js'

export function registerMcp(program: Command, cli: CliContext): void {
  program
    .command('mcp')
    .description('serve the live generation of a plugin folder over MCP on stdio (with hot reload and the journal)')
    .argument('[dir]', 'the plugin folder', '.')
    .option('--session <id>', 'the session MCP calls belong to')
    .action(async (dir: string, flags: { session?: string }, command: Command) => {
      cli.exitCode = await mcp(cli, dir, flags, command.optsWithGlobals().debug === true)
    })
}

async function mcp(cli: CliContext, dirArg: string, flags: { session?: string }, debug: boolean): Promise<number> {
  const { io } = cli
  // stdout belongs to the protocol: every human line goes to stderr, including a tool's console.log.
  const err = io.stderr
  redirectConsole()
  const style = styleFor(err, io.env)
  const dir = pluginDir(io.cwd, dirArg)
  const serve = await loadServe()
  const { createRoot } = await loadRuntime()
  const root = await createRoot({ dir, watch: true, journal: await openJournal(dir), log: logSink(err, style, debug) })
  const stopping = untilStopped()
  try {
    const server = await serve.serveStdio(root, {
      stdin: io.stdin,
      stdout: io.stdout,
      log: (text) => line(err, style.dim(text)),
      ...(flags.session ? { session: flags.session } : {}),
    })
    const capabilities = await root.capabilities()
    line(err, style.dim(`seam mcp: generation ${root.generation} (${capabilities.tools.length} tools, ${capabilities.skills.length} skills) on stdio; journal ${root.journal.location}`))
    follow(root, err, style, dir)
    // The client ends the session by closing stdin; a signal ends it from this side.
    await Promise.race([stopping.promise, server.closed])
    await server.close().catch((error: unknown) => line(err, `seam: closing the MCP server failed: ${messageOf(error)}`))
  } finally {
    await root.close()
    stopping.dispose()
  }
  return EXIT.ok
}

function redirectConsole(): void {
  const toStderr = (...args: unknown[]) => console.error(...args)
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
}

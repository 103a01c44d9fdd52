import { Command, CommanderError } from 'commander'
import { registerApprovals } from './commands/approvals.js'
import { registerCall } from './commands/call.js'
import { registerCheck } from './commands/check.js'
import { registerChat } from './commands/chat.js'
import { registerDev } from './commands/dev.js'
import { registerInit } from './commands/init.js'
import { registerJournal } from './commands/journal.js'
import { registerMcp } from './commands/mcp.js'
import { registerTools } from './commands/tools.js'
import { EXIT, reportError } from './errors.js'
import { type CliContext, type CliIo, processIo } from './io.js'
import { runtimeVersion } from './workspace.js'

/**
 * Runs the `seam` command with `argv` (without `node` and the script) and resolves to its exit
 * code: 0 success, 1 a call that did not complete or a runtime error, 2 a usage error.
 */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const cli: CliContext = { io, exitCode: EXIT.ok }
  const program = createProgram(cli)
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return cli.exitCode
  } catch (error) {
    if (error instanceof CommanderError) return commanderExit(error)
    return reportError(error, io, { debug: program.opts().debug === true || argv.includes('--debug'), dir: io.cwd })
  }
}

/** Help and version exit 0; every parse error (unknown command or flag, missing argument) exits 2. */
function commanderExit(error: CommanderError): number {
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok
  return EXIT.usage
}

/**
 * The `seam` program with every command registered, not yet parsed: what `main` runs, and what
 * `scripts/cli-reference.ts` prints docs/cli.md's reference from.
 */
export function createProgram(cli: CliContext): Command {
  const { io } = cli
  const program = new Command('seam')
    .description('Host AI-agent tools and skills: hot-reloaded generations and one fail-closed call pipeline.')
    .version(runtimeVersion(), '-v, --version')
    .option('--debug', 'print stack traces with errors')
    .exitOverride()
    .showHelpAfterError('(run `seam --help` for usage)')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(text.replace(/^error: /, 'seam: ')),
    })
  // Subcommands are created with program.command(), so they inherit the settings above.
  registerInit(program, cli)
  registerDev(program, cli)
  registerCheck(program, cli)
  registerTools(program, cli)
  registerCall(program, cli)
  registerChat(program, cli)
  registerJournal(program, cli)
  registerApprovals(program, cli)
  registerMcp(program, cli)
  for (const command of program.commands) {
    command.showHelpAfterError(`usage: seam ${command.name()} ${command.usage()}  (see \`seam ${command.name()} --help\`)`)
  }
  return program
}

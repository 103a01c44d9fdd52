import { randomUUID } from 'node:crypto'
import { userInfo } from 'node:os'
import { performance } from 'node:perf_hooks'
import type { Command } from 'commander'
import { contentText } from '../../seams/content.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import { type DevLink, findDev, isLocal, type Local, noteWhich } from '../dev-link.js'
import { EXIT } from '../errors.js'
import { shortPath } from '../../features/diagnostic.js'
import { ms, printable, printableLines } from '../format.js'
import { type CliContext, type InStream, line, type Style, styleFor } from '../io.js'
import { lineReader, terminalApproval } from '../prompt.js'
import { terminalQuestions } from '../question-prompt.js'
import { untilStopped } from '../signals.js'
import { loadRuntime, openJournal, pluginDir } from '../workspace.js'

interface CallFlags {
  dir: string
  session: string
  json?: boolean
  /** `seam --debug`: a failed call's stack too. */
  debug?: boolean
  local?: boolean
}

export function registerCall(program: Command, cli: CliContext): void {
  program
    .command('call')
    .description('run one tool call through the full pipeline, journaled in <dir>/.seam/journal.db (in the folder\'s running `seam dev`, if any)')
    .argument('<tool>', 'the tool name')
    .argument('[json]', 'the arguments as JSON text ("-" reads them from stdin)', '')
    .option('--dir <dir>', 'the plugin folder', '.')
    .option('--session <id>', 'the session the call belongs to', 'cli')
    .option('--json', 'print the outcome object as JSON')
    .option('--local', 'load the folder here even when a `seam dev` of it is running')
    .action(async (tool: string, json: string, flags: CallFlags, command: Command) => {
      cli.exitCode = await call(cli, tool, json, { ...flags, debug: command.optsWithGlobals().debug === true })
    })
}

async function call(cli: CliContext, tool: string, json: string, flags: CallFlags): Promise<number> {
  const { io } = cli
  const style = styleFor(io.stdout, io.env)
  const dir = pluginDir(io.cwd, flags.dir)
  const args = json === '-' ? await readAll(io.stdin) : json
  const found = await findDev(dir, flags.local === true)
  const { outcome, turnId } = isLocal(found) ? await callLocally(cli, dir, tool, args, flags, found) : await callDev(cli, found, tool, args, flags.session)
  if (flags.json) line(io.stdout, JSON.stringify({ ...outcome, turnId }, null, 2))
  else printOutcome(cli, outcome, turnId, style, { dir, debug: flags.debug === true })
  return outcome.status === 'completed' ? EXIT.ok : EXIT.failed
}

/** The call in the running `seam dev`'s root: journaled there, asking on its terminal and console. */
async function callDev(cli: CliContext, dev: DevLink, tool: string, args: string, session: string): Promise<Settled> {
  noteWhich(cli.io.stderr, cli.io.env, dev, 'call')
  const stopping = untilStopped()
  try {
    return await dev.post<Settled>('/api/cli/call', { tool, arguments: args, session, subjectId: currentUser() }, stopping.signal)
  } finally {
    stopping.dispose()
  }
}

async function callLocally(cli: CliContext, dir: string, tool: string, args: string, flags: CallFlags, local: Local): Promise<Settled> {
  const { io } = cli
  const started = performance.now()
  // Approval needs a person at a terminal; otherwise the turn has no port and asking fails closed.
  const interactive = io.stdin.isTTY === true && io.stdout.isTTY === true
  // With --json, stdout carries only the outcome object, so the question goes to stderr.
  const prompt = flags.json ? io.stderr : io.stdout
  const approval = interactive ? terminalApproval({ input: io.stdin, output: prompt, style: styleFor(prompt, io.env) }) : undefined
  const question = interactive ? terminalQuestions(lineReader(io.stdin, prompt), prompt, styleFor(prompt, io.env)) : undefined
  const { createRoot } = await loadRuntime()
  const root = await createRoot({ dir, journal: await openJournal(dir) })
  noteWhich(io.stderr, io.env, local, `loaded the folder (${ms(performance.now() - started)})`)
  const stopping = untilStopped()
  try {
    const turn = await root.beginTurn({
      session: flags.session,
      principal: { subjectId: currentUser(), roles: [] },
      origin: { kind: 'cli' },
      signal: stopping.signal,
      ports: approval ? { approval, question } : {},
    })
    try {
      return { turnId: turn.turnId, outcome: await turn.tools.execute({ callId: `cli-${randomUUID().slice(0, 8)}`, name: tool, arguments: args }) }
    } finally {
      await turn.end()
    }
  } finally {
    await root.close()
    stopping.dispose()
  }
}

interface Settled {
  readonly turnId: string
  readonly outcome: ToolCallOutcome
}

/** `completed read_file (3.2 ms) · turn 3f2a9c1e` then the content text. */
function printOutcome({ io }: CliContext, outcome: ToolCallOutcome, turnId: string, style: Style, options: { dir: string; debug: boolean }): void {
  const ok = outcome.status === 'completed'
  const status = ok ? style.green(outcome.status) : style.red(outcome.status)
  const code = outcome.code ? ` ${style.bold(outcome.code)}${outcome.policy ? ` (${outcome.policy})` : ''}` : ''
  line(io.stdout, `${status}${code} ${outcome.name} ${style.dim(`(${ms(outcome.durationMs)}) · turn ${turnId.slice(0, 8)} · generation ${outcome.generation}`)}`)
  // Tool output may carry terminal escapes (a file's bytes): shown escaped on a terminal; `--json` is raw.
  const safe = io.stdout.isTTY === true ? printableLines : (text: string) => text
  const text = contentText(outcome.content)
  if (text !== '') line(io.stdout, safe(text))
  else if (!ok && outcome.reason) line(io.stdout, safe(outcome.reason))
  if (outcome.status === 'suspended') {
    line(io.stdout, style.dim(`parked: decide it with \`seam approvals --decide ${printable(outcome.callId)} allow --resume\` (or reject)`))
    return
  }
  if (ok || outcome.details === undefined) return
  // Where the tool's error was thrown (source-mapped to the tool file), and its stack with --debug.
  const { file, line: at, column, stack } = outcome.details
  if (typeof file === 'string' && typeof at === 'number' && typeof column === 'number') line(io.stdout, style.dim(`at ${printable(`${shortPath(file, options.dir)}:${at}:${column}`)}`))
  if (options.debug && typeof stack === 'string') line(io.stdout, style.dim(printableLines(stack)))
}

function currentUser(): string {
  try {
    return userInfo().username || 'cli'
  } catch {
    return 'cli'
  }
}

async function readAll(stream: InStream): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8')
}

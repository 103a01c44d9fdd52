import { randomUUID } from 'node:crypto'
import { userInfo } from 'node:os'
import type { Command } from 'commander'
import { type ObservedApprovals, observeApprovals } from '../../adapters/agent-approvals.js'
import { type AgentEvent, runAgent } from '../../adapters/agent.js'
import type { AgentMessage } from '../../adapters/messages.js'
import { type ModelClient, openAiChatModel } from '../../adapters/model-client.js'
import type { Root } from '../../runtime/root.js'
import { messageOf } from '../../errors.js'
import { contentText } from '../../seams/content.js'
import { ChatLog } from '../chat-log.js'
import { chatApproval, LineReader } from '../chat-input.js'
import { terminalQuestions } from '../question-prompt.js'
import type { QuestionPort } from '../../seams/types.js'
import { EXIT, UsageError } from '../errors.js'
import { follow } from '../follow.js'
import { ms, printable, printableLines } from '../format.js'
import { type CliContext, line, type OutStream, type Style, styleFor } from '../io.js'
import { untilStopped } from '../signals.js'
import { loadRuntime, openJournal, pluginDir } from '../workspace.js'

interface ChatFlags {
  model?: string
  baseUrl?: string
  resume?: string
  maxSteps: string
  strict?: boolean
  code?: boolean
}

export function registerChat(program: Command, cli: CliContext): void {
  program
    .command('chat')
    .description("chat with a model at any OpenAI-compatible endpoint that calls the plugin folder's tools")
    .argument('[dir]', 'the plugin folder', '.')
    .option('--model <name>', 'the model (default $OPENAI_MODEL)')
    .option('--base-url <url>', 'the endpoint (default $OPENAI_BASE_URL, else https://api.openai.com/v1); the key is $OPENAI_API_KEY')
    .option('--resume <session>', 'continue a session: its words from .seam/chat, its calls and results from the journal')
    .option('--max-steps <n>', 'model requests per message at most', '16')
    .option('--strict', 'send strict-mode tool schemas (OpenAI Structured Outputs)')
    .option('--code', 'Code Mode: offer the model run_code, one program that calls the tools (docs/code-mode.md)')
    .action(async (dir: string, flags: ChatFlags) => {
      cli.exitCode = await chat(cli, dir, flags)
    })
}

async function chat(cli: CliContext, dirArg: string, flags: ChatFlags): Promise<number> {
  const { io } = cli
  const out = io.stdout
  const style = styleFor(out, io.env)
  const modelName = flags.model ?? io.env.OPENAI_MODEL
  if (!modelName) throw new UsageError('--model is required (or set OPENAI_MODEL)')
  const maxSteps = Number(flags.maxSteps)
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw new UsageError(`--max-steps must be a positive integer, got "${flags.maxSteps}"`)
  const baseUrl = flags.baseUrl ?? io.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1'
  // Said at start, not after the first message: the public endpoint refuses every request without a key.
  if (!io.env.OPENAI_API_KEY && isOpenAi(baseUrl)) {
    throw new UsageError(
      `OPENAI_API_KEY is not set, and ${baseUrl} needs it`,
      'export OPENAI_API_KEY=…, or pass --base-url (or set OPENAI_BASE_URL) for a local OpenAI-compatible server, e.g. --base-url http://localhost:11434/v1 for Ollama',
    )
  }
  const dir = pluginDir(io.cwd, dirArg)
  const log = new ChatLog(dir, flags.resume ?? `chat-${randomUUID().slice(0, 8)}`)
  const model = openAiChatModel({ baseUrl, model: modelName, apiKey: io.env.OPENAI_API_KEY, strict: flags.strict })
  const reader = new LineReader(io.stdin, out)
  const approvals = observeApprovals(chatApproval(reader, out, style))
  const questions = terminalQuestions((prompt, signal) => reader.next(prompt, signal), out, style)
  const { createRoot } = await loadRuntime()
  const root = await createRoot({ dir, watch: true, journal: await openJournal(dir), codeMode: flags.code === true })
  const stopping = untilStopped()
  try {
    let history: AgentMessage[] = []
    if (flags.resume) {
      const resumed = await log.history(root.journal)
      history = resumed.messages
      const turns = `${resumed.turns} turn${resumed.turns === 1 ? '' : 's'}`
      line(out, style.dim(resumed.words ? `resumed ${turns} of session ${log.session}` : `resumed session ${log.session} from the journal: calls and results, no chat log`))
    }
    line(out, `${style.bold('seam chat')} ${modelName} ${style.dim(`at ${baseUrl}`)}`)
    line(out, `  session    ${log.session} ${style.dim(`(seam chat --resume ${log.session})`)}`)
    const capabilities = await root.capabilities()
    const tools = capabilities.tools.map((tool) => tool.name)
    if (flags.code) tools.push('run_code (Code Mode)')
    line(out, `  tools      ${tools.length > 0 ? tools.join(', ') : 'none'}`)
    if (capabilities.skills.length > 0) line(out, `  skills     ${capabilities.skills.map((skill) => (skill.always ? `${skill.name} (always)` : skill.name)).join(', ')}`)
    line(out, `  generation ${root.generation} · journal ${root.journal.location}`)
    line(out, style.dim('an empty line or end of input ends the chat; edits to the plugin apply from the next message'))
    // Hot reload: each message begins a turn on the generation live at that moment.
    follow(root, out, style, dir)
    for (;;) {
      const text = await reader.next(style.cyan('> '), stopping.signal)
      if (text === undefined || text.trim() === '') break
      history = await exchange({ root, log, model, approvals, questions, history, text, maxSteps, signal: stopping.signal, out, style })
      if (stopping.signal.aborted) break
    }
  } finally {
    reader.close()
    await root.close()
    stopping.dispose()
  }
  return EXIT.ok
}

interface Exchange {
  root: Root
  log: ChatLog
  model: ModelClient
  approvals: ObservedApprovals
  questions: QuestionPort
  history: AgentMessage[]
  text: string
  maxSteps: number
  signal: AbortSignal
  out: OutStream
  style: Style
}

/** One user message: a turn, the agent loop, its answer; the history it leaves. */
async function exchange(x: Exchange): Promise<AgentMessage[]> {
  const turn = await x.root.beginTurn({
    session: x.log.session,
    principal: { subjectId: currentUser(), roles: [] },
    origin: { kind: 'cli' },
    signal: x.signal,
    ports: { approval: x.approvals, question: x.questions },
  })
  const messages: AgentMessage[] = [...x.history, { role: 'user', content: x.text }]
  const shown = { streamed: false }
  try {
    await x.log.append({ turnId: turn.turnId, user: x.text })
    const run = runAgent({ turn, model: x.model, messages, maxSteps: x.maxSteps, signal: x.signal, approvals: x.approvals })
    for await (const event of run) show(event, x.out, x.style, shown)
    const result = await run.result
    if (result.reason !== 'final') line(x.out, x.style.yellow(result.reason === 'aborted' ? 'stopped' : `stopped after ${x.maxSteps} model requests`))
    await x.log.append({ turnId: turn.turnId, answer: result.text })
    return [...result.messages]
  } catch (error) {
    // A stream that broke off mid-line: the error starts a line of its own.
    if (shown.streamed) line(x.out)
    line(x.out, x.style.red(`model error: ${printable(messageOf(error))}`))
    // What did run is in the journal: the history keeps every call the turn made, paired.
    return messages
  } finally {
    await turn.end()
  }
}

/**
 * Text already streamed in this model step: `assistant` only ends its line. `progress`: a
 * terminal's live progress line is showing (the next line replaces it); `printedAt`: when each
 * call's progress was last printed where lines cannot be replaced (a pipe, a log).
 */
interface Shown {
  streamed: boolean
  progress?: boolean
  printedAt?: Map<string, number>
}

/** Off a terminal, a call's progress is printed at most this often. */
const PIPED_PROGRESS_MS = 1_000

/** `⋯ crawl 3/5 (60 %) page 3`: the call's latest report, one line. */
function progressLine(event: Extract<AgentEvent, { type: 'tool-progress' }>, style: Style): string {
  const { name, done, total, message } = event.progress
  const count = total === undefined ? `${done}` : `${done}/${total}${total > 0 ? ` (${Math.min(100, Math.round((done / total) * 100))} %)` : ''}`
  const text = `⋯ ${name} ${count}${message === undefined ? '' : ` ${printable(message)}`}`
  return style.dim(text.length > 100 ? `${text.slice(0, 99)}…` : text)
}

function showProgress(event: Extract<AgentEvent, { type: 'tool-progress' }>, out: OutStream, style: Style, shown: Shown): void {
  if (out.isTTY === true) {
    // One line, redrawn in place; whatever is printed next starts by clearing it.
    out.write(`\r\x1b[2K${progressLine(event, style)}`)
    shown.progress = true
    return
  }
  shown.printedAt ??= new Map()
  const last = shown.printedAt.get(event.progress.callId)
  if (last !== undefined && event.progress.at - last < PIPED_PROGRESS_MS) return
  shown.printedAt.set(event.progress.callId, event.progress.at)
  line(out, progressLine(event, style))
}

function show(event: AgentEvent, out: OutStream, style: Style, shown: Shown): void {
  if (event.type === 'tool-progress') {
    showProgress(event, out, style, shown)
    return
  }
  if (shown.progress) {
    out.write('\r\x1b[2K')
    shown.progress = false
  }
  switch (event.type) {
    case 'text-delta':
      shown.streamed = true
      out.write(printableLines(event.text))
      break
    case 'assistant':
      // A server that did not stream sends the text here, all at once.
      if (shown.streamed) line(out)
      else if (event.text !== '') line(out, printableLines(event.text))
      shown.streamed = false
      break
    case 'tool-started': {
      const args = typeof event.call.arguments === 'string' ? event.call.arguments : JSON.stringify(event.call.arguments)
      line(out, style.dim(`→ ${event.call.name} ${printable(args.length > 80 ? `${args.slice(0, 79)}…` : args)}`))
      break
    }
    case 'tool-settled': {
      const { outcome } = event
      if (outcome.status === 'completed') line(out, style.dim(`${style.green('✓')} ${outcome.name} (${ms(outcome.durationMs)})`))
      else line(out, `${style.red('✗')} ${outcome.name} ${style.bold(outcome.code ?? outcome.status)}: ${printable(contentText(outcome.content).split('\n')[0] ?? '')}`)
      break
    }
    default:
      break
  }
}

function currentUser(): string {
  try {
    return userInfo().username || 'cli'
  } catch {
    return 'cli'
  }
}

/** The public OpenAI API, which refuses a request without a key (a local server usually takes none). */
function isOpenAi(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com'
  } catch {
    return false
  }
}

import { type Command, InvalidArgumentError } from 'commander'
import type { ParkedCall } from '../../seams/coordination.js'
import type { JournalEvent, JournalStore } from '../../seams/journal.js'
import { CliError, EXIT } from '../errors.js'
import { shortPath } from '../../features/diagnostic.js'
import { ms, printable, table } from '../format.js'
import { type CliContext, line, type Style, styleFor } from '../io.js'
import { findDev, isLocal, noteWhich } from '../dev-link.js'
import { openExistingJournal, openNamedJournal, pluginDir } from '../workspace.js'

interface JournalFlags {
  turn?: string
  tail?: number
  json?: boolean
  journal?: string
  local?: boolean
}

const DEFAULT_TAIL = 20
/** How far back a short turn id is looked up. */
const PREFIX_WINDOW = 100_000

export function registerJournal(program: Command, cli: CliContext): void {
  program
    .command('journal')
    .description('read <dir>/.seam/journal.db (or --journal) back, one line per event')
    .argument('[dir]', 'the plugin folder', '.')
    .option('--journal <path|url>', 'read this journal instead: a SQLite file, or a postgres:// URL')
    .option('--turn <id>', 'only this turn (a unique prefix of its id is enough)')
    .option('--tail <n>', `only the last n events (default ${DEFAULT_TAIL} without --turn)`, positiveInteger)
    .option('--json', 'print JSON lines, one event per line')
    .option('--local', 'read the journal file here even when a `seam dev` of the folder is running')
    .action(async (dir: string, flags: JournalFlags) => {
      cli.exitCode = await journal(cli, dir, flags)
    })
}

async function journal(cli: CliContext, dirArg: string, flags: JournalFlags): Promise<number> {
  let { events, parked } = await read(cli, dirArg, flags)
  if (flags.turn !== undefined && flags.tail !== undefined) events = events.slice(-flags.tail)
  const out = cli.io.stdout
  if (flags.json) {
    for (const event of events) line(out, JSON.stringify(asJson(event)))
    return EXIT.ok
  }
  const style = styleFor(out, cli.io.env)
  if (events.length === 0) line(out, style.dim('the journal is empty'))
  // Locations shown relative to the plugin folder (a --journal elsewhere: to the working folder).
  const base = flags.journal === undefined ? pluginDir(cli.io.cwd, dirArg) : cli.io.cwd
  for (const row of table(events.map((e) => eventRow(e, style, base)))) line(out, row)
  // A parked call has a question and no result yet: say so, or it reads like a call that hangs.
  for (const call of parked) {
    const decided = call.decision ? `${call.decision.answer} by ${printable(call.decision.by)}, not resumed` : 'waiting for a decision'
    line(out, style.yellow(`parked ${printable(call.turnId.slice(0, 8))} ${printable(call.callId)} ${printable(call.name)}: ${decided}`))
  }
  if (parked.length > 0) line(out, style.dim('see and decide them with `seam approvals`'))
  return EXIT.ok
}

interface Read {
  readonly events: JournalEvent[]
  readonly parked: ParkedCall[]
}

/** From the running `seam dev` of the folder when there is one, else from the journal itself. */
async function read(cli: CliContext, dirArg: string, flags: JournalFlags): Promise<Read> {
  const dir = flags.journal === undefined ? pluginDir(cli.io.cwd, dirArg) : undefined
  // A --journal names the store itself: read there, whatever runs.
  const found = dir === undefined ? undefined : await findDev(dir, flags.local === true)
  if (found !== undefined && !isLocal(found)) {
    noteWhich(cli.io.stderr, cli.io.env, found, 'journal')
    const query = new URLSearchParams(flags.turn === undefined ? { tail: String(flags.tail ?? DEFAULT_TAIL) } : { turn: flags.turn })
    return found.get<Read>(`/api/cli/journal?${query}`)
  }
  const store = dir === undefined ? await openNamedJournal(cli.io.cwd, flags.journal!) : await openExistingJournal(dir)
  try {
    const events = flags.turn === undefined ? await store.tail(flags.tail ?? DEFAULT_TAIL) : await turnEvents(store, flags.turn)
    const parked = await store.coordination.parked(flags.turn === undefined ? {} : { turnId: events[0]?.turnId })
    if (found !== undefined) noteWhich(cli.io.stderr, cli.io.env, found, `read ${store.location}`)
    return { events, parked }
  } finally {
    await store.close()
  }
}

/** The events of the turn `id` names (a unique prefix is enough). */
export async function turnEvents(store: JournalStore, id: string): Promise<JournalEvent[]> {
  const exact = await store.read(id)
  if (exact.length > 0) return exact
  const ids = new Set((await store.tail(PREFIX_WINDOW)).map((e) => e.turnId).filter((t) => t.startsWith(id)))
  if (ids.size > 1) throw new CliError(`turn id "${id}" is ambiguous: ${[...ids].slice(0, 5).join(', ')}`, 'give more of the id')
  const [match] = ids
  if (match === undefined) throw new CliError(`no turn "${id}" in ${store.location}`, 'list recent events with `seam journal --tail 50`')
  return store.read(match)
}

/** time, turn (short), seq, kind, call id, and what the event says. */
export function eventRow(event: JournalEvent, style: Style, dir?: string): string[] {
  const callId = 'callId' in event ? printable(event.callId) : ''
  return [style.dim(timestamp(event.at)), printable(event.turnId.slice(0, 8)), `#${event.seq}`, kindLabel(event.kind, style), callId, describe(event, style, dir)]
}

function describe(event: JournalEvent, style: Style, dir: string | undefined): string {
  switch (event.kind) {
    case 'turn/begin':
      return printable(`session ${event.session} · ${event.subjectId} · generation ${event.generation}${event.owner === 'root' ? '' : ` · owner ${event.owner}`}`)
    case 'tool/call':
      return `${style.bold(printable(event.name))} ${style.dim(printable(clip(event.arguments || '{}', 80)))}`
    case 'approval/asked':
      return `${printable(event.summary)}${event.reason ? style.dim(` (${printable(event.reason)})`) : ''}`
    case 'approval/decided':
      return event.decision.startsWith('allowed') ? style.green(event.decision) : style.red(event.decision)
    case 'tool/result': {
      const status = event.status === 'completed' ? style.green(event.status) : style.red(event.status)
      const code = event.code ? ` ${event.code}${event.policy ? ` (${event.policy})` : ''}` : ''
      // Why it did not complete (the denial reason or the error), as the model was told.
      const why = event.status === 'completed' ? '' : firstText(event.content)
      const where = event.location ? style.dim(` at ${printable(`${shortPath(event.location.file, dir)}:${event.location.line}:${event.location.column}`)}`) : ''
      return `${status}${code} ${style.dim(ms(event.durationMs))}${why ? ` ${printable(clip(why, 160))}` : ''}${where}`
    }
    case 'turn/end':
      return printable(event.reason)
    case 'question/asked':
      return `${event.questionId} ${printable(clip(event.message, 120))}`
    case 'question/answered': {
      const action = event.action === 'accept' ? style.green(event.action) : style.red(event.action)
      return `${event.questionId} ${action}${event.reason ? style.dim(` (${event.reason})`) : ''}${event.content ? ` ${style.dim(printable(clip(event.content, 80)))}` : ''}`
    }
  }
}

/** A `tool/call`'s arguments as JSON rather than an escaped string, when they parse (they may not). */
function asJson(event: JournalEvent): unknown {
  if (event.kind !== 'tool/call' || event.arguments === '') return event
  try {
    return { ...event, arguments: JSON.parse(event.arguments) as unknown }
  } catch {
    return event
  }
}

function firstText(content: readonly { type: string; text?: string }[] | undefined): string {
  const block = content?.find((b) => b.type === 'text' && typeof b.text === 'string')
  return block?.text ?? ''
}

function kindLabel(kind: JournalEvent['kind'], style: Style): string {
  return kind === 'tool/call' || kind === 'tool/result' ? style.cyan(kind) : kind
}

/** Local time, `2026-05-01 14:03:07.123`. */
function timestamp(at: number): string {
  const d = new Date(at)
  const pad = (n: number, width = 2) => String(n).padStart(width, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ')
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a positive integer')
  return Number(value)
}

import { userInfo } from 'node:os'
import type { Command } from 'commander'
import { SeamError } from '../../errors.js'
import type { ApprovalAnswer } from '../../seams/approval.js'
import { Approvals, type PendingApproval } from '../../runtime/approvals/approvals.js'
import { writeSettlement } from '../../runtime/pipeline/park.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import { contentText } from '../../seams/content.js'
import { type DevLink, findDev, isLocal, noteWhich } from '../dev-link.js'
import { EXIT, UsageError } from '../errors.js'
import { type GrantFlags, grants, wantsGrants } from '../grants.js'
import { ms, printable, printableLines, table } from '../format.js'
import { type CliContext, line, type Style, styleFor } from '../io.js'
import { untilStopped } from '../signals.js'
import { journalPath, loadRuntime, openExistingJournal, openJournal, pluginDir } from '../workspace.js'

interface ApprovalsFlags {
  decide?: string[]
  by?: string
  turn?: string
  resume?: boolean | string
  json?: boolean
  local?: boolean
}

const ANSWERS: Readonly<Record<string, ApprovalAnswer>> = {
  allow: 'allowed-once',
  'allow-session': 'allowed-session',
  reject: 'rejected',
}
/** The `--decide` word for each answer. */
const WORDS: Readonly<Record<ApprovalAnswer, string>> = { 'allowed-once': 'allow', 'allowed-session': 'allow-session', rejected: 'reject' }

export function registerApprovals(program: Command, cli: CliContext): void {
  program
    .command('approvals')
    .description('list the calls parked in <dir>/.seam/journal.db waiting for a decision, or decide one')
    .argument('[dir]', 'the plugin folder', '.')
    .option('--decide <callId-and-answer...>', 'decide one parked call: <callId or resume token> allow|allow-session|reject, one its question offered')
    .option('--by <name>', 'who decides (default: the current user)')
    .option('--turn <id>', 'the turn of the call, when its call id is parked in several turns')
    .option('--resume [callId]', 'resume a decided call (in the folder\'s running `seam dev`, else loading the folder here) and print its outcome: after --decide, or alone with its call id (or resume token)')
    .option('--json', 'print JSON: the parked calls, or the decided call (and its outcome)')
    .option('--local', 'use the journal file here even when a `seam dev` of the folder is running (a resume loads the folder)')
    .option('--grants', 'list the standing session grants (an "allow for the session" answer) instead')
    .option('--revoke <id>', 'revoke the session grant with this id (from --grants): its next call asks again')
    .action(async (dir: string, flags: ApprovalsFlags & GrantFlags) => {
      cli.exitCode = wantsGrants(flags) ? await grants(cli, dir, flags) : await approvals(cli, dir, flags)
    })
}

async function approvals(cli: CliContext, dirArg: string, flags: ApprovalsFlags): Promise<number> {
  const dir = pluginDir(cli.io.cwd, dirArg)
  const decision = flags.decide === undefined ? undefined : parseDecision(flags.decide)
  const resumeId = typeof flags.resume === 'string' ? flags.resume : undefined
  if (decision !== undefined && resumeId !== undefined) {
    throw new UsageError('--resume after --decide takes no call id: it resumes the call just decided', `seam approvals --decide ${printable(decision.id)} allow --resume`)
  }
  if (flags.resume === true && decision === undefined) throw new UsageError('--resume needs a call id, or --decide', 'seam approvals --resume <callId>')
  // The CLI is an operator of its own folder's journal: it sees every call's resume token and may resume any.
  const operator = flags.by ?? currentUser()
  const found = await findDev(dir, flags.local === true)
  const desk = isLocal(found) ? await localDesk(dir, operator) : devDesk(found, operator)
  noteWhich(cli.io.stderr, cli.io.env, found, `read ${journalPath(dir)}`)
  const out = cli.io.stdout
  const style = styleFor(out, cli.io.env)
  let decided: PendingApproval
  // Still parked after a rejection: a Code Mode run, whose resume runs its program with the sub-call rejected.
  let rejectedRun = false
  try {
    if (resumeId !== undefined) decided = await findParked(desk, resumeId, flags.turn)
    else if (decision === undefined) return list(cli, await desk.pending(), flags.json === true, style)
    else {
      decided = await desk.decide(decision.id, decision.answer, flags.turn).catch((error: unknown) => {
        throw notOffered(error, decision.id) ?? error
      })
      if (decision.answer === 'rejected') rejectedRun = (await desk.pending()).some((p) => p.callId === decided.callId && p.turnId === decided.turnId)
    }
  } finally {
    await desk.close()
  }
  const answer = decided.decision?.answer
  if (resumeId !== undefined && answer === undefined) {
    throw new UsageError(`${printable(decided.callId)} (${printable(decided.tool)}) is still waiting for a decision; nothing ran`, `seam approvals --decide ${printable(decided.callId)} ${offer(decided.answers)} --resume`)
  }
  const resumable = answer !== 'rejected' || rejectedRun || resumeId !== undefined
  const outcome = flags.resume && resumable ? await desk.resume(decided.resumeToken!) : undefined
  if (flags.json) {
    line(out, JSON.stringify(outcome === undefined ? decided : { ...decided, outcome }))
  } else {
    line(out, `${style.bold(printable(decided.callId))} ${printable(decided.tool)}: ${answerLabel(answer!, style)} by ${printable(decided.decision!.by)}`)
    if (outcome !== undefined) line(out, describeOutcome(outcome, style))
    else if (resumable) line(out, style.dim(`resume it with \`seam approvals --resume ${printable(decided.callId)}\``))
  }
  return outcome === undefined || outcome.status === 'completed' || outcome.status === 'suspended' ? EXIT.ok : EXIT.failed
}

/** The waiting parked call with this call id (in `turnId`, if given) or resume token. */
async function findParked(desk: Desk, id: string, turnId: string | undefined): Promise<PendingApproval> {
  const matches = (await desk.pending()).filter(
    (p) => p.resumeToken === id || (p.callId === id && (turnId === undefined || p.turnId === turnId)),
  )
  if (matches.length > 1) {
    throw new UsageError(`call id ${printable(id)} is parked in ${matches.length} turns; say which with --turn`, `seam approvals --resume ${printable(id)} --turn ${printable(matches[0]!.turnId)}`)
  }
  if (matches[0] === undefined) {
    throw new SeamError('UNKNOWN_APPROVAL', `no parked call waiting to be resumed has the call id or resume token "${id}"`, {
      details: { id },
      hint: 'list parked calls with `seam approvals`',
    })
  }
  return matches[0]
}

function list(cli: CliContext, pending: readonly PendingApproval[], json: boolean, style: Style): number {
  const out = cli.io.stdout
  if (json) {
    line(out, JSON.stringify(pending))
    return EXIT.ok
  }
  if (pending.length === 0) {
    line(out, style.dim('no calls are waiting for a decision'))
    return EXIT.ok
  }
  const now = Date.now()
  const rows = pending.map((p) => [
    style.bold(printable(p.callId)),
    printable(p.summary),
    style.dim(printable(p.reason)),
    printable(`${p.principal} · ${p.session}`),
    style.dim(`${ms(now - p.askedAt)} ago`),
    p.decision ? `${answerLabel(p.decision.answer, style)} by ${printable(p.decision.by)}, not resumed` : `${style.yellow('waiting')} ${offer(p.answers)}`,
  ])
  for (const row of table(rows)) line(out, row)
  line(out, style.dim('decide one with `seam approvals --decide <callId> <answer>`, an answer its row offers'))
  return EXIT.ok
}

/** Where `seam approvals` acts, as the operator it was given: the folder's journal here, or a running `seam dev` of it. */
interface Desk {
  /** Every parked call, with its resume token. */
  pending(): Promise<PendingApproval[]>
  decide(id: string, answer: ApprovalAnswer, turnId: string | undefined): Promise<PendingApproval>
  /** Runs a decided call and settles it: in a root over the folder, or in the dev root (its live generation). */
  resume(token: string): Promise<ToolCallOutcome>
  /** Done listing and deciding (a resume may follow). */
  close(): Promise<void>
}

async function localDesk(dir: string, operator: string): Promise<Desk> {
  const store = await openExistingJournal(dir)
  // The TTL only matters to a host that sweeps; a round's own deadline still holds for a decision here.
  const book = new Approvals(store, Number.MAX_SAFE_INTEGER, [operator], writeSettlement)
  return {
    pending: () => book.pending({ as: operator }),
    decide: (id, answer, turnId) => book.decide(id, answer, { by: operator, turnId, as: operator }),
    async resume(token) {
      const { createRoot } = await loadRuntime()
      const root = await createRoot({ dir, journal: await openJournal(dir), operators: [operator] })
      try {
        return await root.resume(token, { principal: operator })
      } finally {
        await root.close()
      }
    },
    close: () => store.close(),
  }
}

function devDesk(dev: DevLink, operator: string): Desk {
  return {
    pending: () => dev.get(`/api/cli/approvals?${new URLSearchParams({ by: operator })}`),
    decide: (id, answer, turnId) => dev.post('/api/cli/approvals/decide', { id, answer, by: operator, ...(turnId === undefined ? {} : { turnId }) }),
    async resume(token) {
      const stopping = untilStopped()
      try {
        return await dev.post('/api/cli/approvals/resume', { token, by: operator }, stopping.signal)
      } finally {
        stopping.dispose()
      }
    },
    close: async () => {},
  }
}

function parseDecision(values: readonly string[]): { id: string; answer: ApprovalAnswer } {
  const [id, word, ...rest] = values
  const answer = word === undefined ? undefined : ANSWERS[word]
  if (id === undefined || answer === undefined || rest.length > 0) {
    throw new UsageError('--decide takes a call id (or resume token) and one of allow, allow-session, reject', 'seam approvals --decide c1 allow')
  }
  return { id, answer }
}

/** The answers a parked call offers, as `--decide` takes them: `allow|reject`. */
function offer(answers: readonly ApprovalAnswer[]): string {
  return answers.map((answer) => WORDS[answer]).join('|')
}

/** The runtime's refusal of an answer the call did not offer, in the words `--decide` takes. */
function notOffered(error: unknown, id: string): UsageError | undefined {
  if (!SeamError.is(error, 'INVALID_CALL')) return undefined
  const { answer, answers, tool } = (error.details ?? {}) as { answer?: ApprovalAnswer; answers?: readonly ApprovalAnswer[]; tool?: string }
  if (answer === undefined || answers === undefined) return undefined
  const words = answers.map((a) => WORDS[a])
  return new UsageError(
    `${printable(id)} (${printable(tool ?? 'the call')}) offers ${words.join(' or ')}, not ${WORDS[answer]}; it is still waiting`,
    `seam approvals --decide ${printable(id)} ${words.join('|')}`,
  )
}

function answerLabel(answer: ApprovalAnswer, style: Style): string {
  return answer === 'rejected' ? style.red(answer) : style.green(answer)
}

function describeOutcome(outcome: ToolCallOutcome, style: Style): string {
  const status = outcome.status === 'completed' ? style.green(outcome.status) : style.red(outcome.status)
  const code = outcome.code ? ` ${outcome.code}` : ''
  return `${status}${code}${outcome.replayed ? style.dim(' (another host ran it)') : ''}\n${printableLines(contentText(outcome.content))}`
}

function currentUser(): string {
  try {
    return userInfo().username || 'cli'
  } catch {
    return 'cli'
  }
}

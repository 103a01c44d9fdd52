import type { ParkedCall } from '../../seams/coordination.js'
import type { Owner } from './hosts.js'
import type { JournalEvent } from '../../seams/journal.js'

/** The content of every `tool/result` written by crash repair; worded for the model and for people. */
export const UNKNOWN_OUTCOME_TEXT =
  'The process stopped before this tool call settled, so its outcome is unknown: the tool may or may not have run.'

export interface OpenCall {
  readonly turnId: string
  readonly callId: string
  /**
   * The seq its result must take: the one a parked call's turn kept for it. Its turn may be live
   * (the call was resumed by another host that died), so the next free seq is not repair's to take.
   */
  readonly seq?: number
}

export interface RepairPlanInput {
  /** `tool/call`s without a `tool/result`, in the order to close them (by turn, then seq). */
  readonly openCalls: readonly OpenCall[]
  /** Turns with a `turn/begin` and no `turn/end`. */
  readonly openTurns: readonly string[]
  /** The highest seq of every turn named above. */
  readonly maxSeq: ReadonlyMap<string, number>
  readonly at: number
}

/**
 * The events crash repair appends: one `OUTCOME_UNKNOWN` result per open call, then one
 * `interrupted` end per open turn, each numbered after the last event of its turn. Stores insert
 * them under their uniqueness rules, so two repairs racing still write each event once.
 */
export function planRepair(input: RepairPlanInput): JournalEvent[] {
  const next = new Map(input.maxSeq)
  const seqOf = (turnId: string): number => {
    const seq = (next.get(turnId) ?? 0) + 1
    next.set(turnId, seq)
    return seq
  }
  const events: JournalEvent[] = []
  for (const { turnId, callId, seq } of input.openCalls) {
    events.push({
      kind: 'tool/result',
      turnId,
      seq: seq ?? seqOf(turnId),
      at: input.at,
      callId,
      status: 'failed',
      code: 'OUTCOME_UNKNOWN',
      content: [{ type: 'text', text: UNKNOWN_OUTCOME_TEXT }],
      durationMs: 0,
    })
  }
  for (const turnId of input.openTurns) {
    events.push({ kind: 'turn/end', turnId, seq: seqOf(turnId), at: input.at, reason: 'interrupted' })
  }
  return events
}

/** Counts the events a repair actually wrote, by kind. */
export function countRepaired(written: Iterable<Pick<JournalEvent, 'kind'>>): { results: number; turns: number } {
  let results = 0
  let turns = 0
  for (const event of written) {
    if (event.kind === 'tool/result') results += 1
    else if (event.kind === 'turn/end') turns += 1
  }
  return { results, turns }
}

/**
 * Parked calls are waiting, not lost: an open call with a round still waiting is left out. Once its
 * last round was claimed (resumed, expired, voided), the host that claimed it owns the call, and
 * repair closes it only if that host is gone. Calls never parked keep their own owner.
 */
export function ownersAfterParking<T extends OpenCall & Owner>(calls: readonly T[], parked: readonly ParkedCall[]): T[] {
  if (parked.length === 0) return [...calls]
  const last = new Map<string, ParkedCall>()
  for (const round of parked) {
    const key = JSON.stringify([round.turnId, round.callId])
    const held = last.get(key)
    if (held === undefined || held.round < round.round) last.set(key, round)
  }
  const owned: T[] = []
  for (const call of calls) {
    const round = last.get(JSON.stringify([call.turnId, call.callId]))
    if (round !== undefined) {
      if (round.settled !== undefined) owned.push({ ...call, host: round.settled.host, at: round.settled.at, seq: round.resultSeq })
      continue
    }
    // A nested call under a parked outer call (a Code Mode sub-call waiting for its approval) waits
    // with it, and belongs to whoever claimed the outer call's round once it is claimed.
    const outer = outerRound(call, last)
    if (outer === undefined) owned.push(call)
    else if (outer.settled !== undefined) owned.push({ ...call, host: outer.settled.host, at: outer.settled.at })
  }
  return owned
}

/** The last round of the nearest outer call of a nested call (`<outer>/<n>`) that was parked. */
function outerRound(call: OpenCall, last: ReadonlyMap<string, ParkedCall>): ParkedCall | undefined {
  for (let cut = call.callId.lastIndexOf('/'); cut > 0; cut = call.callId.lastIndexOf('/', cut - 1)) {
    const round = last.get(JSON.stringify([call.turnId, call.callId.slice(0, cut)]))
    if (round !== undefined) return round
  }
  return undefined
}

/** `maxSeq` raised past the seqs parked calls keep free, so repair never takes one a resume will write. */
export function withReservedSeqs(maxSeq: Map<string, number>, parked: readonly ParkedCall[]): Map<string, number> {
  for (const round of parked) {
    const reserved = Math.max(round.decidedSeq, round.resultSeq, round.code?.subResultSeq ?? 0)
    if ((maxSeq.get(round.turnId) ?? 0) < reserved) maxSeq.set(round.turnId, reserved)
  }
  return maxSeq
}

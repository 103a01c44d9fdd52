import type { JournalEvent } from './types.js'

/** The content of every `tool/result` written by crash repair; worded for the model and for people. */
export const UNKNOWN_OUTCOME_TEXT =
  'The process stopped before this tool call settled, so its outcome is unknown: the tool may or may not have run.'

export interface OpenCall {
  readonly turnId: string
  readonly callId: string
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
  for (const { turnId, callId } of input.openCalls) {
    events.push({
      kind: 'tool/result',
      turnId,
      seq: seqOf(turnId),
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

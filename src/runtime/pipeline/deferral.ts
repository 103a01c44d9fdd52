/**
 * A nested call's deferred approval, held for its outer call to park (`Deferral`), and what that
 * outer call, a Code Mode run, replays once it is resumed (`CodeResume`).
 */
import type { ApprovalAnswer } from '../../seams/approval.js'
import type { ParkedCall } from '../../seams/coordination.js'
import type { JournalEvent } from '../../seams/journal.js'

/** A nested call's deferred approval, held for its outer call to park (see `CallState.parksNested`). */
export interface Deferral {
  readonly reason: string
  readonly summary: string
  readonly answers: readonly ApprovalAnswer[]
}

/** What a resumed Code Mode run replays (see `CodeRound`). */
export interface CodeResume {
  readonly round: ParkedCall
  /** The waiting sub-call's tool changed since it was parked: its question is asked again. */
  readonly changed: boolean
  /** Seqs of the turn nothing else has taken, for the sub-calls the replay runs. */
  readonly fresh: () => number
  /**
   * The run's sub-calls the journal holds beyond its round, by call id: their `tool/result`, or
   * `null` while open. A replay runs none of them again (one crash repair closed `OUTCOME_UNKNOWN`
   * may have run).
   */
  readonly journaled: ReadonlyMap<string, Extract<JournalEvent, { kind: 'tool/result' }> | null>
}

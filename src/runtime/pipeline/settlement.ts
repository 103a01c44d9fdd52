/** How a call settles short of success (`Settlement`), and the settlement of a call cancelled before it started. */
import type { OutcomeCode } from '../../errors.js'
import type { DenialPolicy, OutcomeStatus } from '../../seams/journal.js'

/** A settled failure or denial, decided by one stage. */
export interface Settlement {
  /** `suspended` only for a parked call (`APPROVAL_PENDING`): not final, and no `tool/result`. */
  readonly status: Exclude<OutcomeStatus, 'completed'> | 'suspended'
  readonly code: OutcomeCode
  readonly policy?: DenialPolicy
  readonly reason?: string
  /** Model-facing text. */
  readonly message: string
  readonly details?: Record<string, unknown>
}

/** The call was cancelled before its body started: nothing ran. */
export function notStarted(name: string): Settlement {
  return { status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH', message: `The call to "${name}" was cancelled before it started; nothing was run.` }
}

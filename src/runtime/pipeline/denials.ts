import { messageOf } from '../../errors.js'
import type { ApprovalDecision } from '../../seams/journal.js'
import type { Settlement } from './settlement.js'

/** The settlement of every decision that is not `allowed-*`, worded for the model. */
export function denial(name: string, decision: ApprovalDecision, reason: string, error?: string): Settlement {
  switch (decision) {
    case 'rejected':
      return { status: 'denied', code: 'DENIED', policy: 'approval', reason: 'rejected by the user', message: `The user rejected the call to "${name}". Do not retry it unchanged; ask what they want instead.` }
    case 'timeout':
      return { status: 'denied', code: 'APPROVAL_TIMEOUT', policy: 'approval', reason: 'no answer in time', message: `The call to "${name}" needed approval (${reason}) and nobody answered in time; it was not run.` }
    case 'cancelled':
      return { status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH', message: `The call to "${name}" was cancelled while waiting for approval; nothing was run.` }
    default:
      return {
        status: 'denied',
        code: 'APPROVAL_UNAVAILABLE',
        policy: 'approval',
        reason: error ?? 'no approval port',
        message: `The call to "${name}" needs approval (${reason}) but no one can approve it in this conversation, so it was not run.`,
        details: error ? { error } : undefined,
      }
  }
}

export function journalDown(name: string, error: unknown): Settlement {
  return {
    status: 'failed',
    code: 'JOURNAL_UNAVAILABLE',
    message: `The call to "${name}" was not run because its approval could not be recorded in the journal.`,
    details: { error: messageOf(error) },
  }
}

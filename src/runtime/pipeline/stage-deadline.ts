import type { DenialPolicy } from '../../seams/journal.js'
import { ABORTED, TIMED_OUT, untilDue } from '../base/abort.js'
import type { CallState } from './state.js'
import type { Settlement } from './settlement.js'

export { ABORTED, TIMED_OUT }

/** What a bounded wait gives: the answer, or why the stage stopped waiting for it. */
export type Waited<T> = T | typeof ABORTED | typeof TIMED_OUT

/**
 * Every stage that waits for host code waits through here, so no call can hang: a policy stage
 * (the permission host, pre-execute hooks, `risk()`, guards, post-execute hooks) for its policy
 * deadline, a journal write for the journal's. The caller's abort ends a policy wait at once. The
 * work is left to finish and is always observed; its late answer is ignored.
 *
 * The deadline is the tool's `policyTimeoutMs`, else the turn policy's, else the runtime's.
 */
export function policyWait<T>(state: CallState, work: PromiseLike<T>): Promise<Waited<T>> {
  return untilDue(work, state.signal, policyTimeout(state))
}

/**
 * A journal write of this call. The caller's abort does not cut it short: what the call decides
 * after an abort (an argument failure still ranks above it) must be as durable as any other result.
 */
export function journalWait<T>(state: CallState, work: PromiseLike<T>): Promise<Waited<T>> {
  return untilDue(work, undefined, state.ctx.limits.journalTimeoutMs)
}

export function policyTimeout(state: CallState): number {
  const { binding, ctx } = state
  const own = binding?.kind === 'feature' ? binding.plan.policyTimeoutMs : undefined
  return own ?? ctx.turn.policy.policyTimeoutMs ?? ctx.limits.policyTimeoutMs
}

/**
 * A policy stage that did not answer in time: fail closed. Before the body ran the call is denied
 * (nothing ran); a post-execute hook past its deadline withholds a result the body produced.
 */
export function policyTimedOut(state: CallState, policy: DenialPolicy | 'post-execute', what: string): Settlement {
  const ms = policyTimeout(state)
  const reason = `${what} did not answer within ${ms} ms`
  const name = state.call.name
  if (policy === 'post-execute') {
    return { status: 'failed', code: 'POLICY_TIMEOUT', reason, message: `The result of "${name}" was withheld: ${reason}.`, details: { stage: policy, timeoutMs: ms } }
  }
  return { status: 'denied', code: 'POLICY_TIMEOUT', policy, reason, message: `The call to "${name}" was not run: ${reason}.`, details: { stage: policy, timeoutMs: ms } }
}

/** A journal write that did not answer in time. */
export function journalTimedOut(state: CallState, what: string): Settlement {
  const ms = state.ctx.limits.journalTimeoutMs
  return {
    status: 'failed',
    code: 'JOURNAL_UNAVAILABLE',
    message: `The call to "${state.call.name}" was not run because the journal did not record ${what} within ${ms} ms. It is safe to retry later.`,
    details: { error: `journal write timed out after ${ms} ms`, timeoutMs: ms },
  }
}

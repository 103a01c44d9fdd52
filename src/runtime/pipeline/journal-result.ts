import type { OutcomeStatus } from '../journal/types.js'
import type { CallState } from './state.js'

/**
 * Stage 11: the durable `tool/result`, paired with the `tool/call` written in stage 1. When the
 * journal fails here, crash repair closes the call as `OUTCOME_UNKNOWN` on the next start.
 */
export function journalResult(state: CallState): Promise<void> | undefined {
  return appendResult(state)?.then(undefined, unrecorded)
}

/** Writes `tool/result` when the call's `tool/call` was written; it may reject (see `journalResult`). */
export function appendResult(state: CallState): Promise<void> | undefined {
  const { ctx, outcome } = state
  // A parked call has no result yet: whoever resumes or expires it writes one.
  if (!state.journaled || !outcome || outcome.status === 'suspended') return undefined
  return ctx
    .append({
      kind: 'tool/result',
      turnId: ctx.turn.turnId,
      seq: ctx.nextSeq(),
      at: Date.now(),
      callId: outcome.callId,
      status: outcome.status as OutcomeStatus,
      code: outcome.code,
      policy: outcome.policy,
      content: outcome.content as never,
      durationMs: outcome.durationMs,
    })
}

/** The outcome stands; crash repair closes the call in the journal on the next start. */
function unrecorded(): void {}

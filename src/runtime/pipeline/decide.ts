/**
 * How a body run's result settles its call: a value, a failure, a timeout, a cancellation or an
 * abandoned body (see `BodyRun`).
 */
import type { CallState } from './state.js'
import { settle } from './settle.js'
import type { DispatchResult } from '../../seams/calls.js'

/** What a run resolves with for wrappers when its body was abandoned. */
export const ABANDONED: unique symbol = Symbol('abandoned')
export type BodyResult = DispatchResult | typeof ABANDONED

/** What `decide` reads of a body run (`BodyRun` in body-run.ts, which imports this file). */
export interface RunVerdict {
  readonly timedOut: boolean
  readonly timeoutMs: number
  readonly abandoned: boolean
  readonly abortCaused: boolean
}

/**
 * Settles the call from what its run produced: a value, a failure, a timeout or an abandoned body.
 * `result` is `undefined` for the `value` a `defineTool` body returned (no result object is made
 * for the common case unless a post-execute hook will read it).
 */
export function decide(state: CallState, run: RunVerdict, result: BodyResult | undefined, value?: unknown): void {
  const name = state.call.name
  if (run.timedOut) {
    settle(state, {
      status: 'failed',
      code: 'TOOL_TIMEOUT',
      message: `The tool "${name}" did not finish within ${run.timeoutMs} ms and was stopped. Try a smaller request.`,
      details: run.abandoned ? { abandoned: true } : undefined,
    })
    return
  }
  const cancelled = state.signal.aborted
  if (result === ABANDONED) {
    settle(state, { status: 'cancelled', code: 'ABORTED', message: `The call to "${name}" was cancelled.`, details: { abandoned: true } })
    return
  }
  // Only post-execute hooks look at the result as the body gave it.
  const kept = state.ctx.generation.hooks.postExecute.length > 0
  if (result === undefined || result.ok) {
    if (cancelled) {
      settle(state, { status: 'cancelled', code: 'ABORTED', message: `The call to "${name}" was cancelled; its result was discarded.` })
      return
    }
    if (kept) state.dispatch = result ?? { ok: true, value }
    if (result === undefined) {
      state.value = value
      state.hasValue = true
      return
    }
    state.value = result.value
    // A provider that answered with content alone has no value (its content is the whole result).
    state.hasValue = result.content === undefined || result.value !== undefined
    state.providerContent = result.content
    return
  }
  if (kept) state.dispatch = result
  if (cancelled && run.abortCaused) {
    settle(state, { status: 'cancelled', code: 'ABORTED', message: `The call to "${name}" was cancelled.` })
    return
  }
  if (result.unavailable) {
    settle(state, {
      status: 'failed',
      code: 'PROVIDER_UNAVAILABLE',
      message: `The tool "${name}" is unavailable right now: ${result.error}`,
      details: result.details,
    })
    return
  }
  settle(state, {
    status: 'failed',
    code: 'TOOL_ERROR',
    message: `The tool "${name}" failed: ${result.error}`,
    details: result.details,
  })
}

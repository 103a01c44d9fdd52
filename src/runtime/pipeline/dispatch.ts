import { messageOf, SeamError } from '../../errors.js'
import { ABORTED, TIMED_OUT, untilDue } from '../base/abort.js'
import { BodyRun, type Commit } from './body-run.js'
import { ABANDONED, type BodyResult, decide } from './decide.js'
import type { CallState } from './state.js'
import { settle } from './settle.js'
import { notStarted } from './settlement.js'
import type { DispatchResult, ExecuteWrapper, ToolExecution } from '../../seams/calls.js'

export type { Commit } from './body-run.js'

/**
 * Runs the body of a call no wrapper stands around, and commits the call itself once the body
 * settles (or is abandoned): the promise returned is the call's own, resolving with what `commit`
 * makes of it. Nothing else is allocated to wait for the body (see `runCall`).
 */
export function runBody<T>(state: CallState, commit: Commit, finish: (state: CallState) => T): Promise<T> {
  return new BodyRun(state).run(commit, finish) as Promise<T>
}

/**
 * Runs the body of a call no wrapper stands around and settles the call from its result, then
 * calls `done`: a batch call, committed by its batch (see `BodyRun.notify`).
 */
export function notifyBody(state: CallState, done: () => void): void {
  new BodyRun(state).notify(done)
}

/**
 * Stage 7: `execute` wrappers around dispatch, then the body or `ToolService.execute`. The body's
 * signal fuses the caller's signal, a wrapper's replacement and the deadline. A body still running
 * `graceMs` after its deadline (or after a caller abort) is settled without it and tracked as
 * abandoned: it keeps its generation leased until it really settles.
 */
export function dispatch(state: CallState): Promise<void> | undefined {
  if (!state.args) return undefined
  const wrappers = state.ctx.generation.hooks.execute
  const run = new BodyRun(state)
  // Without wrappers the run decides the call itself when the body settles: one promise less.
  if (wrappers.length === 0) return run.run(undefined, undefined) as Promise<void>
  const decided = (r: BodyResult) => {
    run.finish()
    decide(state, run, r)
  }
  const failed = (error: unknown) => {
    run.finish()
    decide(state, run, { ok: false, error: `an execute wrapper failed: ${messageOf(error)}`, details: { stage: 'execute-wrapper' } })
  }
  const wrapped = wrap(wrappers, 0, state.exec!, run, undefined)
  // The wrappers and the body together get the body's deadline and grace period, from now.
  return untilDue(wrapped, state.signal, run.timeoutMs + run.graceMs).then((r) => {
    if (r === TIMED_OUT) return cutOff(state, run, wrapped)
    if (r !== ABORTED) return decided(r)
    // Cancelled while a wrapper held the call before its body started: settle now, run nothing
    // (a late next() is refused). Once the body started, it has `graceMs` to settle (its run
    // bounds it), and the wrappers around it no longer than that.
    if (!state.dispatched) {
      run.finish()
      settle(state, notStarted(state.call.name))
      return
    }
    return untilDue(wrapped, undefined, run.graceMs).then((late) => (late === TIMED_OUT || late === ABORTED ? cutOff(state, run, wrapped) : decided(late)), failed)
  }, failed)
}

/**
 * The wrappers held the call past its deadline (or past the grace after an abort): settle without
 * them, stop a body still running, and keep the generation leased until the wrappers return.
 */
function cutOff(state: CallState, run: BodyRun, wrapped: Promise<unknown>): void {
  const { ctx, call } = state
  // A body still running is abandoned (and reported) by its run; otherwise the wrappers are.
  if (!run.cutOff()) ctx.onAbandoned({ callId: call.callId, name: call.name, generation: ctx.generation.number, since: Date.now() })
  const release = ctx.lease()
  wrapped.then(release, release)
  const name = call.name
  if (state.signal.aborted) {
    settle(state, { status: 'cancelled', code: 'ABORTED', message: `The call to "${name}" was cancelled.`, details: { abandoned: true, stage: 'execute-wrapper' } })
    return
  }
  settle(state, {
    status: 'failed',
    code: 'TOOL_TIMEOUT',
    message: `The tool "${name}" did not finish within ${run.timeoutMs} ms and was stopped. Try a smaller request.`,
    details: { abandoned: true, stage: 'execute-wrapper' },
  })
}

function wrap(wrappers: readonly ExecuteWrapper[], index: number, exec: ToolExecution, run: BodyRun, signal: AbortSignal | undefined): Promise<BodyResult> {
  const wrapper = wrappers[index]
  if (!wrapper) return run.start(signal)
  let called = false
  const next = (replacement?: AbortSignal): Promise<DispatchResult> => {
    if (called) return Promise.reject(new SeamError('INVALID_CALL', 'an execute wrapper called next() twice'))
    called = true
    const substituted = replacement instanceof AbortSignal ? replacement : signal
    return wrap(wrappers, index + 1, exec, run, substituted).then((r) => (r === ABANDONED ? run.abandonedResult() : r))
  }
  try {
    return Promise.resolve(wrapper(exec, next)).then((r) => (run.abandoned ? ABANDONED : validResult(r)))
  } catch (error) {
    return Promise.reject(error)
  }
}

function validResult(result: unknown): DispatchResult {
  const r = result as DispatchResult | null
  if (r && r.ok === true) return r
  if (r && r.ok === false && typeof r.error === 'string') return r
  return { ok: false, error: 'an execute wrapper returned an invalid result' }
}


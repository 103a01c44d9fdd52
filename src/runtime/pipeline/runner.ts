import { performance } from 'node:perf_hooks'
import { messageOf } from '../../errors.js'
import { checkApproval } from './approval.js'
import { checkAbort, parseArguments } from './arguments.js'
import { type Commit, dispatch, runBody } from './dispatch.js'
import { checkGeneration, checkStillLive } from './generation-check.js'
import { checkGuards } from './guards.js'
import { claimIdempotency, settleIdempotency } from './idempotency.js'
import { journalCall, journalCallWaited } from './journal-call.js'
import { journalResult } from './journal-result.js'
import { normalize } from './normalize.js'
import { observe } from './observe.js'
import { checkPermission } from './permission.js'
import { postExecute } from './post-execute.js'
import { type CallState, settle } from './state.js'

type Stage = (state: CallState) => void | Promise<void> | undefined
type Stages = readonly (readonly [string, Stage])[]

/**
 * The pipeline as named stages in run order. Admission runs in model order (one lane in a batch);
 * dispatch may overlap; commit runs in model order. A stage that settles the call skips the rest
 * of admission and dispatch; commit always runs, so every call ends with exactly one outcome.
 */
export const admission = [
  ['tool/call', journalCallWaited],
  ['generation', checkGeneration],
  ['arguments', parseArguments],
  ['abort', checkAbort],
  ['permission', checkPermission],
  // Before approval: a call whose key replays a stored result runs nothing, so asks nothing.
  ['idempotency', claimIdempotency],
  ['approval', checkApproval],
  ['guards', checkGuards],
  ['live', checkStillLive],
] as const satisfies Stages

/**
 * Execution begins with the last abort check, in the same synchronous step as dispatch: in a batch,
 * admission and execution are awaited apart, and an abort in between must still start nothing.
 */
export const execution = [
  ['abort', checkAbort],
  ['execute', dispatchUnlessReplayed],
] as const satisfies Stages

/** A call whose idempotency key replayed a stored result has its value already: nothing runs. */
function dispatchUnlessReplayed(state: CallState): Promise<void> | undefined {
  return state.replayed ? undefined : dispatch(state)
}

/** Commitment up to the outcome and its live observers; the durable `tool/result` follows. */
const settlement = [
  ['post-execute', postExecute],
  ['normalize', normalize],
  ['idempotency', settleIdempotency],
  ['tools/result', observe],
] as const satisfies Stages

export const commitment = [...settlement, ['tool/result', journalResult]] as const satisfies Stages

/** What `runCall` runs between the two journal writes, which it awaits itself. */
const afterCall: Stages = [...admission.slice(1), ...execution]

/**
 * One call, start to finish. Stages that finish synchronously run in this step, with no async
 * frame and no promise of their own: a call whose admission is synchronous (the memory journal, no
 * hooks that wait) returns its body run's promise, which commits the call and resolves with what
 * `finish` makes of it once the body settles (one promise and one reaction on the body's promise
 * in all). The first stage that returns a promise hands the rest to `continueCall`, one await per
 * such stage. Faults are settled here (fail closed); the promise never rejects.
 */
export function runCall<T>(state: CallState, finish: (state: CallState) => T): Promise<T> {
  state.waited = false
  let journaling: Promise<void> | undefined
  try {
    journaling = journalCall(state)
  } catch (error) {
    fault(state, error)
  }
  if (journaling !== undefined) {
    state.waited = true
    return continueCall(state, finish, 0, journaling)
  }
  for (let index = 0; index < afterCall.length && !state.settled; index += 1) {
    let pending: Promise<void> | undefined
    try {
      if (index === EXECUTE && runsBodyAlone(state)) return runBody(state, commitCall as Commit, finish)
      pending = afterCall[index]![1](state) as Promise<void> | undefined
    } catch (error) {
      fault(state, error)
    }
    if (pending !== undefined) {
      state.waited = true
      return continueCall(state, finish, index + 1, pending)
    }
  }
  const committed = commitCall(state, finish)
  return committed instanceof Promise ? committed : Promise.resolve(committed)
}

/** The execute stage's place in `afterCall` (its last). */
const EXECUTE = afterCall.length - 1

/** No wrapper stands around the body, and it is to run: the body run then commits the call itself. */
function runsBodyAlone(state: CallState): boolean {
  return state.ctx.generation.hooks.execute.length === 0 && !state.replayed && state.args !== undefined
}

/** `runCall` from stage `from` on, once a stage returned `pending`: one await per stage that waits. */
async function continueCall<T>(state: CallState, finish: (state: CallState) => T, from: number, pending: Promise<void>): Promise<T> {
  try {
    await pending
  } catch (error) {
    fault(state, error)
  }
  for (let index = from; index < afterCall.length && !state.settled; index += 1) {
    try {
      const next = afterCall[index]![1](state)
      if (next !== undefined) await next
    } catch (error) {
      fault(state, error)
    }
  }
  return commitCall(state, finish)
}

/**
 * Stages 8–11, then `finish`: synchronous while every stage is (the memory journal's `tool/result`
 * is stored at once), else a promise. Never throws: a stage that does is settled by `recover`.
 */
export function commitCall<T>(state: CallState, finish: (state: CallState) => T): T | Promise<T> {
  for (let index = 0; index < settlement.length; index += 1) {
    let pending: Promise<void> | undefined
    try {
      pending = settlement[index]![1](state) as Promise<void> | undefined
    } catch (error) {
      return finishAfter(recover(state, error), state, finish)
    }
    if (pending !== undefined) return finishSettlement(state, finish, index + 1, pending)
  }
  // Stage 11: the outcome stands if the journal fails or stalls here (`journalResult` never rejects).
  const appended = journalResult(state)
  return appended === undefined ? finish(state) : finishAfter(appended, state, finish)
}

/**
 * `finish` once `pending` settles. Its own function: a closure over `state` and `finish` inside
 * `commitCall` can make every call allocate a context for them, though most calls never wait.
 */
function finishAfter<T>(pending: Promise<void>, state: CallState, finish: (state: CallState) => T): Promise<T> {
  return pending.then(() => finish(state))
}

async function finishSettlement<T>(state: CallState, finish: (state: CallState) => T, from: number, pending: Promise<void>): Promise<T> {
  try {
    await pending
    for (let index = from; index < settlement.length; index += 1) {
      const next = settlement[index]![1](state)
      if (next !== undefined) await next
    }
  } catch (error) {
    await recover(state, error)
    return finish(state)
  }
  const appended = journalResult(state)
  if (appended !== undefined) await appended
  return finish(state)
}

/**
 * Runs `stages` in order until one settles the call (or all of them, with `always`). Returns
 * `undefined` when every stage finished synchronously: no promise, no microtask hop.
 */
export function runStages(state: CallState, stages: Stages, always = false, from = 0): Promise<void> | undefined {
  // An index loop: destructuring `for (const [, stage] of stages)` allocates iterators per call.
  for (let index = from; index < stages.length; index += 1) {
    if (!always && state.settled) return undefined
    const pending = stages[index]![1](state)
    if (pending !== undefined) return pending.then(() => runStages(state, stages, always, index + 1))
  }
  return undefined
}

/** `runStages` with faults settled (fail closed); `undefined` when every stage was synchronous. */
export function attempt(state: CallState, stages: Stages): Promise<void> | undefined {
  try {
    return runStages(state, stages)?.catch((error: unknown) => fault(state, error))
  } catch (error) {
    fault(state, error)
    return undefined
  }
}

/** Stages 8–11 of a batch call; `undefined` when they all finished synchronously. */
export function commit(state: CallState): Promise<void> | undefined {
  try {
    return runStages(state, commitment, true)?.catch((error: unknown) => recover(state, error))
  } catch (error) {
    return recover(state, error)
  }
}

/** A batch call that never started: journaled, then settled as `ABORTED_BEFORE_DISPATCH`. */
export async function abortedBeforeDispatch(state: CallState): Promise<void> {
  try {
    await runStages(state, [admission[0]])
  } catch (error) {
    fault(state, error)
  }
  settle(state, {
    status: 'cancelled',
    code: 'ABORTED_BEFORE_DISPATCH',
    message: `The call to "${state.call.name}" was cancelled before it started; nothing was run.`,
  })
  await commit(state)
}

/** An unexpected fault inside a stage still settles the call (fail closed), never escapes. */
function fault(state: CallState, error: unknown): void {
  settle(state, {
    status: 'failed',
    code: 'TOOL_ERROR',
    message: `The call to "${state.call.name}" failed inside the runtime: ${messageOf(error)}`,
    details: { internal: true },
  })
}

async function recover(state: CallState, error: unknown): Promise<void> {
  fault(state, error)
  // Normalization finished, so observers ran: only a journal that throws synchronously gets here.
  if (state.outcome) return
  // A commit stage failed before the outcome existed: the call still gets one outcome, one live
  // result and one durable tool/result.
  state.outcome = Object.freeze({
    callId: state.call.callId,
    name: state.call.name,
    generation: state.ctx.generation.number,
    status: 'failed',
    code: 'TOOL_ERROR',
    // Blocks frozen too: the memory journal keeps an outcome's content as it is (see `appendResult`).
    content: Object.freeze([Object.freeze({ type: 'text' as const, text: `The call to "${state.call.name}" failed inside the runtime.` })]),
    durationMs: performance.now() - state.startedAt,
  })
  observe(state)
  await journalResult(state)
}

import { performance } from 'node:perf_hooks'
import { messageOf } from '../../errors.js'
import { checkApproval } from './approval.js'
import { checkAbort, parseArguments } from './arguments.js'
import { type Commit, dispatch, notifyBody, runBody } from './dispatch.js'
import { checkGeneration, checkStillLive } from './generation-check.js'
import { checkGuards } from './guards.js'
import { claimIdempotency, settleIdempotency } from './idempotency.js'
import { journalCall, journalCallWaited } from './journal-call.js'
import { journalResult } from './journal-result.js'
import { normalize } from './normalize.js'
import { observe } from './observe.js'
import { checkPermission } from './permission.js'
import { postExecute } from './post-execute.js'
import type { CallState } from './state.js'
import { settle } from './settle.js'

type Stage = (state: CallState) => void | Promise<void> | undefined
type Stages = readonly (readonly [string, Stage])[]

/**
 * The pipeline's stages after `tool/call`, in run order, by place: a switch of direct calls, which
 * the optimizing compiler inlines where a stage is small; the named stages below are made from it.
 * Called from a table of functions in one loop, each stage was a call through the generic builtin
 * (one site, many targets): 2 % of a call on Node 24.
 * Admission runs in model order (one lane in a batch); dispatch may overlap; commit runs in model
 * order. A stage that settles the call skips the rest of admission and dispatch; commit always
 * runs, so every call ends with exactly one outcome.
 */
function stageAfterCall(index: number, state: CallState): void | Promise<void> | undefined {
  switch (index) {
    case 0:
      return checkGeneration(state)
    case 1:
      return parseArguments(state)
    case 2:
      return checkAbort(state)
    case 3:
      return checkPermission(state)
    case 4:
      // Before approval: a call whose key replays a stored result runs nothing, so asks nothing.
      return claimIdempotency(state)
    case 5:
      return checkApproval(state)
    case 6:
      return checkGuards(state)
    case 7:
      return checkStillLive(state)
    // Execution begins with the last abort check, in the same synchronous step as dispatch: in a
    // batch, admission and execution are awaited apart, and an abort in between must still start nothing.
    case 8:
      return checkAbort(state)
    default:
      // A call whose idempotency key replayed a stored result has its value already: nothing runs.
      return state.replayed ? undefined : dispatch(state)
  }
}

/** `stageAfterCall`'s stages by name, in its order. */
const AFTER_CALL = ['generation', 'arguments', 'abort', 'permission', 'idempotency', 'approval', 'guards', 'live', 'abort', 'execute'] as const

/** The stages after the outcome's content is settled, up to its live observers (see `stageAfterCall`). */
function settlementStage(index: number, state: CallState): void | Promise<void> | undefined {
  switch (index) {
    case 0:
      return postExecute(state)
    case 1:
      return normalize(state)
    case 2:
      return settleIdempotency(state)
    default:
      return observe(state)
  }
}

const SETTLEMENT = ['post-execute', 'normalize', 'idempotency', 'tools/result'] as const

function named(names: readonly string[], stage: (index: number, state: CallState) => void | Promise<void> | undefined, from = 0): Stages {
  return names.map((name, index) => [name, (state: CallState) => stage(from + index, state)] as const)
}

/**
 * The pipeline as named stages, in three parts a batch awaits apart. A batch runs them through
 * `admit`, `startExecution` and `commit`, which call the same stages in this order without a
 * promise per stage (per-stage promises made a batch's call cost twice a single call's); `admit`
 * writes `tool/call` as `runCall` does, and the batch (`turns/batch.ts`) gives the steps
 * `journalCallWaited` would wait to the commits of the calls before it.
 */
const JOURNAL_CALL: Stages = [['tool/call', journalCallWaited]]
export const admission: Stages = [...JOURNAL_CALL, ...named(AFTER_CALL.slice(0, 8), stageAfterCall)]
export const execution: Stages = named(AFTER_CALL.slice(8), stageAfterCall, 8)
/** Commitment: the outcome and its live observers, then the durable `tool/result`. */
export const commitment: Stages = [...named(SETTLEMENT, settlementStage), ['tool/result', journalResult]]

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
  for (let index = 0; index < AFTER_CALL.length && !state.settled; index += 1) {
    let pending: Promise<void> | undefined
    try {
      if (index === EXECUTE && runsBodyAlone(state)) return runBody(state, commitCall as Commit, finish)
      pending = stageAfterCall(index, state) as Promise<void> | undefined
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

/** The execute stage's place in `AFTER_CALL` (its last). */
const EXECUTE = AFTER_CALL.length - 1

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
  for (let index = from; index < AFTER_CALL.length && !state.settled; index += 1) {
    try {
      const next = stageAfterCall(index, state)
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
  for (let index = 0; index < SETTLEMENT.length; index += 1) {
    let pending: Promise<void> | undefined
    try {
      pending = settlementStage(index, state) as Promise<void> | undefined
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
    for (let index = from; index < SETTLEMENT.length; index += 1) {
      const next = settlementStage(index, state)
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

/**
 * The admission stages of a batch call (`admission`, in its order), as `runCall` runs them: in
 * this step while they are synchronous (`undefined`: nothing waited), else a promise from the first
 * stage that waits, one await per such stage. Faults are settled here; the promise never rejects.
 */
export function admit(state: CallState): Promise<void> | undefined {
  let pending: Promise<void> | undefined
  try {
    pending = journalCall(state)
  } catch (error) {
    fault(state, error)
  }
  if (pending !== undefined) return admitFrom(state, 0, pending)
  for (let index = 0; index < EXECUTE - 1 && !state.settled; index += 1) {
    try {
      pending = stageAfterCall(index, state) as Promise<void> | undefined
    } catch (error) {
      fault(state, error)
    }
    if (pending !== undefined) return admitFrom(state, index + 1, pending)
  }
  return undefined
}

async function admitFrom(state: CallState, from: number, pending: Promise<void>): Promise<void> {
  try {
    await pending
  } catch (error) {
    fault(state, error)
  }
  for (let index = from; index < EXECUTE - 1 && !state.settled; index += 1) {
    try {
      const next = stageAfterCall(index, state)
      if (next !== undefined) await next
    } catch (error) {
      fault(state, error)
    }
  }
}

/** `startExecution` started a body that calls its `done` once the call is settled. */
export const NOTIFIES = 'notifies'

/**
 * The execution stages of a batch call (`execution`: the last abort check, then dispatch) in one
 * step. A body no wrapper stands around settles the call and then calls `done`, with no promise to
 * wait on (`NOTIFIES`; `done` may be called before this returns); with wrappers, the promise of
 * the call's settling, which the caller waits on and whose faults it settles with `fault`;
 * `undefined` when nothing started. A fault thrown here is settled here.
 */
export function startExecution(state: CallState, done: () => void): Promise<void> | typeof NOTIFIES | undefined {
  try {
    for (let index = EXECUTE - 1; index <= EXECUTE && !state.settled; index += 1) {
      if (index === EXECUTE && runsBodyAlone(state)) {
        notifyBody(state, done)
        return NOTIFIES
      }
      const pending = stageAfterCall(index, state) as Promise<void> | undefined
      if (pending !== undefined) return pending
    }
  } catch (error) {
    fault(state, error)
  }
  return undefined
}

/**
 * Stages 8–11 of a batch call (`commitment`, every one of them, as `commitCall` runs them);
 * `undefined` when they all finished synchronously. Never rejects.
 */
export function commit(state: CallState): Promise<void> | undefined {
  const committed = commitCall(state, nothing)
  return committed instanceof Promise ? committed : undefined
}

function nothing(): void {}

/** A batch call that never started: journaled, then settled as `ABORTED_BEFORE_DISPATCH`. */
export async function abortedBeforeDispatch(state: CallState): Promise<void> {
  try {
    await runStages(state, JOURNAL_CALL)
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
export function fault(state: CallState, error: unknown): void {
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

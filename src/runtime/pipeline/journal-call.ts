import { messageOf } from '../../errors.js'
import { APPENDED } from '../journal/events.js'
import { epochAt } from './clock.js'
import { journalResult } from './journal-result.js'
import { journalTimedOut, journalWait, TIMED_OUT } from './stage-deadline.js'
import { type CallState, settle } from './state.js'

/**
 * Stage 1: the durable `tool/call`. If it cannot be written, the body never runs. A write that
 * stalls past the journal deadline settles the call; should it land later after all, the call's
 * `tool/result` follows it, so the pair still holds.
 */
export function journalCall(state: CallState): Promise<void> | undefined {
  if (!claimCallId(state)) return undefined
  let appending: Promise<void>
  try {
    appending = appendCall(state)
  } catch (error) {
    callNotRecorded(state, error)
    return undefined
  }
  // Already stored (the memory journal): nothing to wait for, no deadline, no microtask.
  if (appending === APPENDED) {
    state.journaled = true
    return undefined
  }
  return journalWait(state, appending).then(
    (done) => {
      if (done === TIMED_OUT) unconfirmed(state, appending)
      else state.journaled = true
    },
    (error: unknown) => callNotRecorded(state, error),
  )
}

/**
 * `journalCall` for a batch: always waits for the write, even one the journal stored at once. The
 * commits (and result observers) of the calls admitted before run during that wait, so an observer
 * that aborts the batch stops the calls after it; a single call (`runCall`) has no one to wait for.
 */
export async function journalCallWaited(state: CallState): Promise<void> {
  if (!claimCallId(state)) return
  try {
    const appending = appendCall(state)
    const done = await journalWait(state, appending)
    if (done === TIMED_OUT) unconfirmed(state, appending)
    else state.journaled = true
  } catch (error) {
    callNotRecorded(state, error)
  }
}

function unconfirmed(state: CallState, appending: Promise<void>): void {
  settle(state, journalTimedOut(state, 'it'))
  appending.then(
    () => {
      state.journaled = true
      // Committed meanwhile without a tool/result (there was no tool/call yet): write it now.
      if (state.outcome) void journalResult(state)
    },
    () => {},
  )
}

/** Writes `tool/call`; the caller marks the call journaled once this resolves (see `runCall`). */
export function appendCall(state: CallState): Promise<void> {
  const { ctx, call } = state
  const raw = typeof call.arguments === 'string' ? call.arguments : safeStringify(call.arguments)
  state.raw = raw
  return ctx.append({
      kind: 'tool/call',
      turnId: ctx.turn.turnId,
      seq: ctx.nextSeq(),
      // A single call journals this in the step it began (see \`runCall\`); a batch call may have waited.
      at: epochAt(state.waited ? performance.now() : state.startedAt),
      callId: call.callId,
      name: call.name,
      arguments: raw,
      generation: ctx.generation.number,
  })
}

/**
 * Claims the call id for this turn, before its `tool/call` is written. A reused id settles the call
 * as `DUPLICATE_CALL` with nothing journaled (the turn's `tool/call` for that id stands, and its
 * sequence has no gap); the caller then skips the append.
 */
export function claimCallId(state: CallState): boolean {
  const { callIds } = state.ctx
  const { callId, name } = state.call
  // One set operation: adding an id the set holds leaves its size as it was.
  const size = callIds.size
  if (callIds.add(callId).size !== size) return true
  settle(state, {
    status: 'failed',
    code: 'DUPLICATE_CALL',
    message: `The call to "${name}" was not run: this turn already has a call with id "${callId}". Give each call its own id.`,
  })
  return false
}

export function callNotRecorded(state: CallState, error: unknown): void {
  // Nothing was recorded under this id, so a retry with the same id is a first use.
  state.ctx.callIds.delete(state.call.callId)
  settle(state, {
    status: 'failed',
    code: 'JOURNAL_UNAVAILABLE',
    message: `The call to "${state.call.name}" was not run because it could not be recorded in the journal. It is safe to retry later.`,
    details: { error: messageOf(error) },
  })
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return '[unserializable arguments]'
  }
}

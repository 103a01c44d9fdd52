import { performance } from 'node:perf_hooks'
import { messageOf } from '../../errors.js'
import { APPENDED } from '../journal/events.js'
import { epochAt } from './clock.js'
import { journalResult } from './journal-result.js'
import { journalTimedOut, journalWait, TIMED_OUT } from './stage-deadline.js'
import type { JournalEvent } from '../../seams/journal.js'
import type { CallState } from './state.js'
import { settle } from './settle.js'

/**
 * Stage 1: the durable `tool/call`. If it cannot be written, the body never runs. A write that
 * stalls past the journal deadline settles the call; should it land later after all, the call's
 * `tool/result` follows it, so the pair still holds.
 */
export function journalCall(state: CallState): Promise<void> | undefined {
  let appending: Promise<void> | false
  try {
    appending = claimAndAppend(state)
  } catch (error) {
    callNotRecorded(state, error)
    return undefined
  }
  if (appending === false) return undefined
  // Already stored (the memory journal): nothing to wait for, no deadline, no microtask.
  if (appending === APPENDED) {
    state.journaled = true
    return undefined
  }
  return landed(state, appending)
}

/**
 * Marks the call journaled once `appending` lands within the journal deadline. Its own function:
 * closures over `state` inside `journalCall` can make every call allocate a context for them,
 * though the memory journal's calls never wait.
 */
function landed(state: CallState, appending: Promise<void>): Promise<void> {
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
  try {
    const appending = claimAndAppend(state)
    if (appending === false) return
    // Stored already (the memory journal): the wait is one step, with no deadline to keep.
    if (appending === APPENDED) {
      await appending
      state.journaled = true
      return
    }
    const done = await journalWait(state, appending)
    if (done === TIMED_OUT) unconfirmed(state, appending)
    else state.journaled = true
  } catch (error) {
    callNotRecorded(state, error)
  }
}

/**
 * Claims the call's id for this turn and writes its `tool/call`; `false` when the id is taken (the
 * call is then settled `DUPLICATE_CALL`, and nothing is written: the turn's `tool/call` for that id
 * stands, and its sequence has no gap). A memory journal (`appendNow`) claims the id by its own
 * uniqueness rule; for any other store the id is claimed in the turn's set first, and a write that
 * fails gives it back (`callNotRecorded`). The caller marks the call journaled once the write it
 * returns has landed.
 */
function claimAndAppend(state: CallState): Promise<void> | false {
  const { ctx } = state
  const { appendNow } = ctx
  if (appendNow === undefined) {
    if (!claimCallId(state)) return false
    return ctx.append(callEvent(state))
  }
  const event = callEvent(state)
  let stored: boolean
  try {
    stored = appendNow(event)
  } catch (error) {
    // As a store's `append` would reject: a write that failed, nothing claimed.
    return Promise.reject(error)
  }
  if (stored) return APPENDED
  // Nothing was written at the seq the event took: the turn's sequence keeps no gap.
  ctx.unusedSeq!(event.seq)
  duplicateCall(state)
  return false
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

/** The call's `tool/call` event; keeps the arguments' JSON text on the call (`state.raw`). */
function callEvent(state: CallState): JournalEvent {
  const { ctx, call } = state
  const raw = typeof call.arguments === 'string' ? call.arguments : safeStringify(call.arguments)
  state.raw = raw
  const turnId = ctx.turn.turnId
  const seq = ctx.nextSeq()
  // A single call journals this in the step it began (see `runCall`); a batch call may have waited.
  const at = epochAt(state.waited ? performance.now() : state.startedAt)
  const generation = ctx.generation.number
  const parent = state.parent
  // Two literals rather than a spread of one: a spread copy with one more field is a shape the
  // journal's append sees only for nested calls, and its freeze and size reads then take a slow path.
  if (parent === undefined) return { kind: 'tool/call', turnId, seq, at, callId: call.callId, name: call.name, arguments: raw, generation }
  return { kind: 'tool/call', turnId, seq, at, callId: call.callId, name: call.name, arguments: raw, generation, parent: parent.call.callId }
}

/** Claims the call id in the turn's set; a reused id settles the call (see `claimAndAppend`). */
function claimCallId(state: CallState): boolean {
  const { callIds } = state.ctx
  // One set operation: adding an id the set holds leaves its size as it was.
  const size = callIds.size
  if (callIds.add(state.call.callId).size !== size) return true
  duplicateCall(state)
  return false
}

function duplicateCall(state: CallState): void {
  const { callId, name } = state.call
  settle(state, {
    status: 'failed',
    code: 'DUPLICATE_CALL',
    message: `The call to "${name}" was not run: this turn already has a call with id "${callId}". Give each call its own id.`,
  })
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

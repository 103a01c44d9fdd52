import { SeamError } from '../../errors.js'
import { untilDue } from '../base/abort.js'
import { APPENDED } from '../journal/events.js'
import { epochAt } from './clock.js'
import type { JournalEvent, OutcomeStatus, SourceLocation } from '../../seams/journal.js'
import type { CallState } from './state.js'

/**
 * Stage 11: the durable `tool/result`, paired with the `tool/call` written in stage 1. When the
 * journal fails here or stalls past its deadline, the outcome stands and crash repair closes the
 * call as `OUTCOME_UNKNOWN` on the next start. When the store refuses it because this host was
 * fenced, the host that fenced it closed the call as `OUTCOME_UNKNOWN`: the caller gets that too,
 * so the caller and the journal never disagree. Never rejects, never throws.
 */
export function journalResult(state: CallState): Promise<void> | undefined {
  let appending: Promise<void> | undefined
  try {
    appending = appendResult(state)
  } catch {
    // A journal that throws instead of rejecting: the outcome stands all the same.
    return undefined
  }
  // Nothing written, or already stored (the memory journal): nothing to wait for.
  if (appending === undefined || appending === APPENDED) return undefined
  return untilDue(appending, undefined, state.ctx.limits.journalTimeoutMs).then(unrecorded, (error: unknown) => refused(state, error))
}

/**
 * Writes `tool/result` once, when the call's `tool/call` was written; it may reject (see
 * `journalResult`). A memory journal (`appendNow`) keeps the outcome's frozen content as it is.
 */
function appendResult(state: CallState): Promise<void> | undefined {
  const { ctx, outcome } = state
  // A parked call has no result yet: whoever resumes or expires it writes one.
  if (!state.journaled || !outcome || outcome.status === 'suspended' || state.resultJournaled) return undefined
  state.resultJournaled = true
  const kept = ctx.keptResult
  const seq = kept !== undefined && kept.callId === state.call.callId ? kept.seq : ctx.nextSeq()
  // When the outcome was made: no second clock reading, and no field on every call's state to keep it.
  const at = epochAt(state.startedAt + outcome.durationMs)
  const status = outcome.status as OutcomeStatus
  const content = outcome.content as Extract<JournalEvent, { kind: 'tool/result' }>['content']
  const parent = state.parent
  const { appendNow } = ctx
  // Nearly every call: completed, its body ran, not nested. One literal with every field, in the
  // order the general path below gives them: spreading a first literal into a second with the body's
  // two fields made a garbage copy per call, and the copy kept those two fields out of line (a
  // property array the journal then holds for as long as it holds the event).
  if (outcome.code === undefined && outcome.policy === undefined && status === 'completed' && state.dispatched && parent === undefined) {
    const start = state.bodyStart ?? state.startedAt
    const bodyMs = state.bodyEnd === undefined ? 0 : Math.round((state.bodyEnd - start) * 1000) / 1000
    const event: JournalEvent = { kind: 'tool/result', turnId: ctx.turn.turnId, seq, at, callId: outcome.callId, status, content, durationMs: outcome.durationMs, bodyAt: epochAt(start), bodyMs }
    if (appendNow !== undefined) return appendNow(event, true) ? APPENDED : undefined
    return ctx.append(event)
  }
  // A completed call's result has no code or policy: two fields fewer to keep, not two `undefined`s.
  let event: JournalEvent =
    outcome.code === undefined && outcome.policy === undefined
      ? { kind: 'tool/result', turnId: ctx.turn.turnId, seq, at, callId: outcome.callId, status, content, durationMs: outcome.durationMs }
      : { kind: 'tool/result', turnId: ctx.turn.turnId, seq, at, callId: outcome.callId, status, code: outcome.code, policy: outcome.policy, content, durationMs: outcome.durationMs }
  // A failed call's details say where its error was thrown: kept, so `seam journal` can say it too.
  if (outcome.details !== undefined && status !== 'completed') {
    const location = locationOf(outcome.details)
    if (location !== undefined) event = { ...event, location }
  }
  // When its body ran (a call denied or cancelled before it has none): the console's waterfall.
  if (state.dispatched) {
    const start = state.bodyStart ?? state.startedAt
    event = { ...event, bodyAt: epochAt(start), bodyMs: state.bodyEnd === undefined ? 0 : Math.round((state.bodyEnd - start) * 1000) / 1000 }
  }
  if (parent !== undefined) event = { ...event, parent: parent.call.callId }
  // Refused (another writer's result for this call): the outcome stands, as for a failed write.
  if (appendNow !== undefined) return appendNow(event, true) ? APPENDED : undefined
  return ctx.append(event)
}

function locationOf(details: Readonly<Record<string, unknown>>): SourceLocation | undefined {
  const { file, line, column } = details
  return typeof file === 'string' && typeof line === 'number' && typeof column === 'number' ? { file, line, column } : undefined
}

/** Either way the outcome stands; when unrecorded, crash repair closes the call on the next start. */
function unrecorded(): void {}

/** A fenced host's result was refused: the journal holds (or will hold) `OUTCOME_UNKNOWN`, and so does the caller. */
function refused(state: CallState, error: unknown): void {
  const outcome = state.outcome
  if (outcome === undefined || !SeamError.is(error) || error.code !== 'HOST_FENCED') return
  const text = `This host lost its lease on the journal before the result of "${outcome.name}" was recorded, so another host closed the call: its outcome is unknown (the tool may or may not have run).`
  state.outcome = Object.freeze({
    callId: outcome.callId,
    name: outcome.name,
    generation: outcome.generation,
    status: 'failed',
    code: 'OUTCOME_UNKNOWN',
    content: Object.freeze([Object.freeze({ type: 'text' as const, text })]),
    details: Object.freeze({ error: error.message }),
    durationMs: outcome.durationMs,
  })
}

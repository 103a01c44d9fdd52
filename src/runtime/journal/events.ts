import { SeamError } from '../../errors.js'
import type { JournalEvent, JournalEventKind } from '../../seams/journal.js'

/**
 * What a store's `append` returns when the event is already stored by the time it returns (the
 * memory journal): the pipeline then has nothing to wait for, so it skips the journal deadline and
 * the await. Any other promise is waited for, bounded by `journalTimeoutMs`.
 */
export const APPENDED: Promise<void> = Promise.resolve()

/**
 * Whether `kind` belongs to one call (unique per `(turnId, callId, kind)`), to the turn (unique per
 * `(turnId, kind)`), or is unknown. A switch, not a set lookup or an `in` test: this runs on every
 * append, over events of six shapes, where a generic property check goes megamorphic.
 */
function scopeOf(kind: unknown): 'call' | 'turn' | undefined {
  switch (kind) {
    case 'tool/call':
    case 'tool/result':
    case 'approval/asked':
    case 'approval/decided':
    case 'question/asked':
    case 'question/answered':
      return 'call'
    case 'turn/begin':
    case 'turn/end':
      return 'turn'
    default:
      return undefined
  }
}

/** The columns a SQL store indexes, plus the whole event as JSON. */
export interface EventRow {
  readonly turnId: string
  readonly seq: number
  readonly kind: JournalEventKind
  /** `null` for turn events, so they fall under the `(turnId, kind)` index instead. */
  readonly callId: string | null
  readonly at: number
  readonly host: string | null
  readonly payload: string
}

/** The call an event belongs to, or `undefined` for a turn event. */
export function callIdOf(event: JournalEvent): string | undefined {
  if (scopeOf(event.kind) !== 'call') return undefined
  // A call may ask several questions: each is keyed as one of the call's own (`c1#q2`), so the
  // uniqueness rule holds per question.
  const { callId, questionId } = event as { callId: string; questionId?: string }
  return questionId === undefined ? callId : `${callId}#${questionId}`
}

/**
 * Rejects events the stores cannot key, before every append: a call event without a `callId`
 * would slip past the uniqueness rule, or be dropped silently by SQLite's `INSERT OR IGNORE`.
 */
export function checkEvent(event: JournalEvent): void {
  // No closures here: this runs on every append, and a per-call closure is an allocation (and,
  // under tsx's keepNames, a defineProperty) for a path that almost never throws.
  if (event === null || typeof event !== 'object') throw badEvent(event, 'to be an object')
  if (typeof event.turnId !== 'string' || event.turnId === '') throw badEvent(event, 'a non-empty `turnId`')
  // At most 2^31 - 1: PostgreSQL keeps `seq` in an `integer` column.
  if (!Number.isSafeInteger(event.seq) || event.seq < 1 || event.seq > 0x7fff_ffff) throw badEvent(event, 'a positive 32-bit integer `seq`')
  // Whole milliseconds: the SQL stores keep `at` in an integer column.
  if (!Number.isSafeInteger(event.at)) throw badEvent(event, 'an `at` in whole epoch milliseconds')
  const scope = scopeOf(event.kind)
  if (scope === 'call') {
    const callId: unknown = (event as { callId?: unknown }).callId
    if (typeof callId !== 'string' || callId === '') throw badEvent(event, `a non-empty \`callId\` on ${event.kind}`)
  } else if (scope === undefined) {
    throw badEvent(event, 'a known `kind`')
  } else if ((event as { callId?: unknown }).callId !== undefined) {
    // A turn event is unique per turn; with a call id it would be keyed as a call's event instead.
    throw badEvent(event, `no \`callId\` on ${event.kind}`)
  }
}

function badEvent(event: JournalEvent | null, what: string): SeamError {
  return new SeamError('INVALID_CALL', `A journal event needs ${what}.`, {
    details: event === null || typeof event !== 'object' ? {} : { turnId: event.turnId, kind: event.kind, seq: event.seq },
  })
}

/** `event` as a SQL row; `host` (when given) is stamped on the stored event too. */
export function toRow(event: JournalEvent, host?: string): EventRow {
  const stored = host === undefined ? event : { ...event, host }
  return {
    turnId: event.turnId,
    seq: event.seq,
    kind: event.kind,
    callId: callIdOf(event) ?? null,
    at: event.at,
    host: stored.host ?? null,
    payload: JSON.stringify(stored),
  }
}

/** The error for an append that a uniqueness rule refused; only that append fails. */
export function duplicateError(row: Pick<EventRow, 'turnId' | 'seq' | 'kind' | 'callId'>, location: string): SeamError {
  const what = row.callId === null ? row.kind : `${row.kind} for call ${row.callId}`
  return new SeamError(
    'JOURNAL_DUPLICATE',
    `Journal ${location} already holds ${what} of turn ${row.turnId}, or that turn's seq ${row.seq}.`,
    { details: { turnId: row.turnId, callId: row.callId, kind: row.kind, seq: row.seq } },
  )
}

export function closedError(location: string): SeamError {
  return new SeamError('CLOSED', `Journal ${location} is closed.`)
}

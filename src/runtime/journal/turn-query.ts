import { SeamError } from '../../errors.js'
import type { JournalEvent, OutcomeStatus, TurnQuery, TurnSummary } from '../../seams/journal.js'

export const DEFAULT_TURN_PAGE = 50
export const MAX_TURN_PAGE = 500

/** The filters of a `TurnQuery`, in the order a store should prefer one to drive its scan (most selective first). */
export const TURN_FILTERS = ['session', 'host', 'tool', 'code', 'status'] as const
export type TurnFilter = (typeof TURN_FILTERS)[number]

/** A checked query: the limit in range, the cursor decoded, only the filters that were given. */
export interface PlannedTurnQuery {
  readonly limit: number
  /** Only turns whose position is below this one (the store's own ordinal); `undefined` from the newest. */
  readonly before: number | undefined
  readonly filters: ReadonlyArray<readonly [TurnFilter, string]>
}

/** Checks `query` once for every store; a bad limit, filter or cursor is an `INVALID_OPTIONS` fault. */
export function planTurnQuery(query: TurnQuery = {}): PlannedTurnQuery {
  const limit = query.limit ?? DEFAULT_TURN_PAGE
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_TURN_PAGE) {
    throw invalid(`A turn page holds 1 to ${MAX_TURN_PAGE} turns; got limit ${String(limit)}.`)
  }
  const filters: [TurnFilter, string][] = []
  for (const name of TURN_FILTERS) {
    const value = query[name]
    if (value === undefined) continue
    if (typeof value !== 'string' || value === '') throw invalid(`The turn filter \`${name}\` must be a non-empty string.`)
    filters.push([name, value])
  }
  return { limit, before: query.before === undefined ? undefined : decodeCursor(query.before), filters }
}

/** The cursor of the page after the one ending at `position`: opaque to callers, a store ordinal inside. */
export function encodeCursor(position: number): string {
  return Buffer.from(`t${position}`).toString('base64url')
}

function decodeCursor(cursor: string): number {
  const match = typeof cursor === 'string' ? /^t(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString()) : null
  if (match === null) throw invalid('The turn page cursor is not one this journal handed out (pass `next` back unchanged).')
  return Number(match[1])
}

function invalid(message: string): SeamError {
  return new SeamError('INVALID_OPTIONS', message)
}

/** A turn summary names at most this many tools (a turn may call hundreds). */
export const TURN_TOOLS_SHOWN = 8

/** What a store counts of a turn's calls for its summary. */
export interface TurnCalls {
  readonly calls: number
  readonly tools: readonly string[]
  readonly outcomes: Readonly<Partial<Record<OutcomeStatus, number>>>
}

/** The calls of a turn from its events (the memory store's and any store's fallback). */
export function countTurnCalls(events: Iterable<JournalEvent>): TurnCalls {
  let calls = 0
  const tools = new Set<string>()
  const outcomes: Partial<Record<OutcomeStatus, number>> = {}
  for (const event of events) {
    if (event.kind === 'tool/call') {
      calls += 1
      if (tools.size < TURN_TOOLS_SHOWN) tools.add(event.name)
    } else if (event.kind === 'tool/result') outcomes[event.status] = (outcomes[event.status] ?? 0) + 1
  }
  return { calls, tools: [...tools], outcomes }
}

/** The summary of a turn from its `turn/begin`, its `turn/end` (when it has one) and its calls. */
export function summarizeTurn(begin: JournalEvent, end: JournalEvent | undefined, { calls, tools, outcomes }: TurnCalls): TurnSummary {
  if (begin.kind !== 'turn/begin') throw new TypeError(`summarizeTurn needs a turn/begin, got ${begin.kind}`)
  return {
    turnId: begin.turnId,
    session: begin.session,
    subjectId: begin.subjectId,
    owner: begin.owner,
    generation: begin.generation,
    ...(typeof begin.host === 'string' ? { host: begin.host } : {}),
    begunAt: begin.at,
    ...(end?.kind === 'turn/end' ? { endedAt: end.at, endReason: end.reason } : {}),
    calls,
    tools,
    outcomes,
  }
}

/** Whether `event` matches the call-level filter `name` (`tool`, `status` or `code`). */
export function eventMatches(event: JournalEvent, name: TurnFilter, value: string): boolean {
  switch (name) {
    case 'session':
      return event.kind === 'turn/begin' && event.session === value
    case 'host':
      return event.kind === 'turn/begin' && event.host === value
    case 'tool':
      return event.kind === 'tool/call' && event.name === value
    case 'status':
      return event.kind === 'tool/result' && event.status === value
    case 'code':
      return event.kind === 'tool/result' && event.code === value
  }
}

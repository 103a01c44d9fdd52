import type { SqliteDatabase, SqliteStatement } from './sqlite-driver.js'
import { encodeCursor, type PlannedTurnQuery, summarizeTurn, TURN_TOOLS_SHOWN, type TurnFilter } from './turn-query.js'
import type { JournalEvent, JournalEventKind, TurnPage } from '../../seams/journal.js'

/**
 * Where each filter of `JournalStore.turns` is found: the event kind and the value, as an
 * expression over the events table (its columns prefixed by `at`, an alias and a dot, or nothing). Each has a partial index on `(value, turn)` (see
 * `TURN_INDEXES`), so a filter walks its matching turns newest first without touching the others.
 */
const FILTERS: Readonly<Record<TurnFilter, { kind: JournalEventKind; value: (at: string) => string }>> = {
  session: { kind: 'turn/begin', value: (at) => `json_extract(${at}payload, '$.session')` },
  host: { kind: 'turn/begin', value: (at) => `${at}host` },
  tool: { kind: 'tool/call', value: (at) => `json_extract(${at}payload, '$.name')` },
  status: { kind: 'tool/result', value: (at) => `json_extract(${at}payload, '$.status')` },
  code: { kind: 'tool/result', value: (at) => `json_extract(${at}payload, '$.code')` },
}

// Added to journals of any age on open: indexes change no row, so older builds still read the file.
// SQLite uses a partial index only when the query repeats its WHERE literally, hence the inlined kinds.
const TURN_INDEXES = Object.entries(FILTERS)
  .map(
    ([name, filter]) =>
      `CREATE INDEX IF NOT EXISTS seam_journal_turns_by_${name} ON seam_journal_events (${filter.value('')}, turn)
        WHERE kind = '${filter.kind}';`,
  )
  .join('\n')

export function ensureTurnIndexes(db: SqliteDatabase): void {
  db.exec(TURN_INDEXES)
}

interface PageRow {
  readonly turn: number
  readonly begin: string
  readonly end: string | null
  readonly calls: number
  /** JSON: the distinct tool names, first asked first. */
  readonly tools: string
  readonly completed: number
  readonly denied: number
  readonly failed: number
  readonly cancelled: number
}

const OUTCOME_STATUSES = ['completed', 'denied', 'failed', 'cancelled'] as const
const TOOL = FILTERS.tool.value
const STATUS = FILTERS.status.value

/**
 * `JournalStore.turns` over SQLite. Turns are numbered in the order their first event (their
 * `turn/begin`) was stored, so a page is "numbers below the cursor, highest first": one filter
 * drives the scan down its index and the others are checked per turn through theirs.
 */
export class SqliteTurnQueries {
  readonly #db: SqliteDatabase
  /** One statement per shape of query (which filters, which one drives). */
  readonly #statements = new Map<string, SqliteStatement>()

  constructor(db: SqliteDatabase) {
    this.#db = db
  }

  page(plan: PlannedTurnQuery): TurnPage {
    const names = plan.filters.map(([name]) => name)
    const key = names.join(',')
    let statement = this.#statements.get(key)
    if (statement === undefined) {
      statement = this.#db.prepare(turnPageSql(names))
      this.#statements.set(key, statement)
    }
    const values = plan.filters.map(([, value]) => value)
    const rows = statement.all(...values, plan.before ?? Number.MAX_SAFE_INTEGER, plan.limit + 1) as PageRow[]
    const more = rows.length > plan.limit
    const kept = more ? rows.slice(0, plan.limit) : rows
    const turns = kept.map((row) =>
      summarizeTurn(JSON.parse(row.begin) as JournalEvent, row.end === null ? undefined : (JSON.parse(row.end) as JournalEvent), {
        calls: row.calls,
        tools: JSON.parse(row.tools) as string[],
        outcomes: Object.fromEntries(OUTCOME_STATUSES.filter((status) => row[status] > 0).map((status) => [status, row[status]])),
      }),
    )
    return more ? { turns, next: encodeCursor(kept.at(-1)!.turn) } : { turns }
  }
}

/**
 * The page query for these filters, the first driving. A turn's summary reads its own events only,
 * each through an index: its calls in `seq` order (the first of each tool name), its results by status. Parameters: one value per filter (in `names` order), then the cursor, then the limit. */
export function turnPageSql(names: readonly TurnFilter[]): string {
  const [driver, ...checks] = names
  const drive =
    driver === undefined
      ? `SELECT d.turn FROM seam_journal_events d WHERE d.kind = 'turn/begin' AND d.call_id IS NULL`
      : `SELECT d.turn FROM seam_journal_events d WHERE d.kind = '${FILTERS[driver].kind}' AND ${FILTERS[driver].value('d.')} = ?`
  const exists = checks.map((name, index) => {
    const alias = `f${index}`
    const { kind, value } = FILTERS[name]
    return ` AND EXISTS (SELECT 1 FROM seam_journal_events ${alias}
      WHERE ${alias}.kind = '${kind}' AND ${value(`${alias}.`)} = ? AND ${alias}.turn = d.turn)`
  })
  return `WITH page (turn) AS (
      ${drive}${exists.join('')} AND d.turn < ? GROUP BY d.turn ORDER BY d.turn DESC LIMIT ?)
    SELECT p.turn, b.payload AS begin, e.payload AS "end",
      (SELECT count(*) FROM seam_journal_events c WHERE c.turn = p.turn AND c.call_id IS NOT NULL AND c.kind = 'tool/call') AS calls,
      (SELECT json_group_array(name) FROM (SELECT ${TOOL('c.')} AS name FROM seam_journal_events c
        WHERE c.turn = p.turn AND c.kind = 'tool/call' AND NOT EXISTS (SELECT 1 FROM seam_journal_events o INDEXED BY seam_journal_turns_by_tool
          WHERE o.kind = 'tool/call' AND ${TOOL('o.')} = ${TOOL('c.')} AND o.turn = c.turn AND o.seq < c.seq)
        ORDER BY c.seq LIMIT ${TURN_TOOLS_SHOWN})) AS tools,
      ${OUTCOME_STATUSES.map((status) => `(SELECT count(*) FROM seam_journal_events r WHERE r.kind = 'tool/result' AND ${STATUS('r.')} = '${status}' AND r.turn = p.turn) AS ${status}`).join(',\n      ')}
    FROM page p
    JOIN seam_journal_events b ON b.turn = p.turn AND b.kind = 'turn/begin' AND b.call_id IS NULL
    LEFT JOIN seam_journal_events e ON e.turn = p.turn AND e.kind = 'turn/end' AND e.call_id IS NULL
    ORDER BY p.turn DESC`
}

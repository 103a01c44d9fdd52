import type { SqliteDatabase, SqliteStatement } from './sqlite-driver.js'
import { encodeCursor, type PlannedTurnQuery, summarizeTurn, TURN_TOOLS_SHOWN, type TurnCalls, type TurnFilter } from './turn-query.js'
import type { JournalEvent, JournalEventKind, TurnPage } from './types.js'

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
  /** JSON: status → count of the turn's results. */
  readonly outcomes: string
}

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
        outcomes: JSON.parse(row.outcomes) as TurnCalls['outcomes'],
      }),
    )
    return more ? { turns, next: encodeCursor(kept.at(-1)!.turn) } : { turns }
  }
}

/** The page query for these filters, the first driving. Parameters: one value per filter (in `names` order), then the cursor, then the limit. */
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
      (SELECT json_group_array(name) FROM (SELECT json_extract(c.payload, '$.name') AS name FROM seam_journal_events c
        WHERE c.turn = p.turn AND c.call_id IS NOT NULL AND c.kind = 'tool/call' GROUP BY name ORDER BY min(c.id) LIMIT ${TURN_TOOLS_SHOWN})) AS tools,
      (SELECT coalesce(json_group_object(status, n), '{}') FROM (SELECT json_extract(r.payload, '$.status') AS status, count(*) AS n
        FROM seam_journal_events r WHERE r.turn = p.turn AND r.call_id IS NOT NULL AND r.kind = 'tool/result' GROUP BY status)) AS outcomes
    FROM page p
    JOIN seam_journal_events b ON b.turn = p.turn AND b.kind = 'turn/begin' AND b.call_id IS NULL
    LEFT JOIN seam_journal_events e ON e.turn = p.turn AND e.kind = 'turn/end' AND e.call_id IS NULL
    ORDER BY p.turn DESC`
}

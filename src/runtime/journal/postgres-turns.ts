import type pg from 'pg'
import { encodeCursor, type PlannedTurnQuery, summarizeTurn, TURN_TOOLS_SHOWN, type TurnCalls, type TurnFilter } from './turn-query.js'
import type { JournalEvent, JournalEventKind, TurnPage } from '../../seams/journal.js'

/** Where each filter of `JournalStore.turns` is found: the event kind and the value (columns prefixed by `at`). */
const FILTERS: Readonly<Record<TurnFilter, { kind: JournalEventKind; value: (at: string) => string }>> = {
  session: { kind: 'turn/begin', value: (at) => `(${at}payload->>'session')` },
  host: { kind: 'turn/begin', value: (at) => `${at}host` },
  tool: { kind: 'tool/call', value: (at) => `(${at}payload->>'name')` },
  status: { kind: 'tool/result', value: (at) => `(${at}payload->>'status')` },
  code: { kind: 'tool/result', value: (at) => `(${at}payload->>'code')` },
}

/**
 * The indexes `turns` walks, added to journals of any age (an index changes no row). Turns are
 * ordered by the id of their `turn/begin`; session and host filters walk their own index of begins,
 * call filters are checked per turn through an index on `(turn_id, value)`.
 */
export function turnIndexesSql(table: string): string {
  const value = (name: TurnFilter) => FILTERS[name].value('')
  const begins = (name: TurnFilter) =>
    `CREATE INDEX IF NOT EXISTS seam_journal_turns_by_${name} ON ${table} (${value(name)}, id) WHERE kind = 'turn/begin';`
  const calls = (name: TurnFilter) =>
    `CREATE INDEX IF NOT EXISTS seam_journal_turns_by_${name} ON ${table} (turn_id, ${value(name)}) WHERE kind = '${FILTERS[name].kind}';`
  return [
    `CREATE INDEX IF NOT EXISTS seam_journal_begun ON ${table} (id) WHERE kind = 'turn/begin';`,
    begins('session'),
    begins('host'),
    calls('tool'),
    calls('status'),
    calls('code'),
  ].join('\n')
}

interface PageRow {
  readonly id: string
  readonly begin: JournalEvent
  readonly end: JournalEvent | null
  readonly calls: number
  readonly tools: string[]
  readonly outcomes: TurnCalls['outcomes']
}

/** `JournalStore.turns` over PostgreSQL: begins below the cursor, newest first, each filter an index probe. */
export async function pageTurns(pool: pg.Pool, table: string, plan: PlannedTurnQuery): Promise<TurnPage> {
  const values: unknown[] = []
  const where = [`b.kind = 'turn/begin'`, 'b.call_id IS NULL']
  for (const [name, value] of plan.filters) {
    values.push(value)
    const { kind, value: column } = FILTERS[name]
    where.push(
      kind === 'turn/begin'
        ? `${column('b.')} = $${values.length}`
        : `EXISTS (SELECT 1 FROM ${table} f WHERE f.turn_id = b.turn_id AND f.kind = '${kind}' AND ${column('f.')} = $${values.length})`,
    )
  }
  if (plan.before !== undefined) {
    values.push(plan.before)
    where.push(`b.id < $${values.length}`)
  }
  values.push(plan.limit + 1)
  const sql = `SELECT b.id, b.payload AS begin, e.payload AS "end",
      (SELECT count(*) FROM ${table} c WHERE c.turn_id = b.turn_id AND c.call_id IS NOT NULL AND c.kind = 'tool/call')::int AS calls,
      (SELECT coalesce(json_agg(name ORDER BY first), '[]') FROM (SELECT c.payload->>'name' AS name, min(c.id) AS first FROM ${table} c
        WHERE c.turn_id = b.turn_id AND c.call_id IS NOT NULL AND c.kind = 'tool/call' GROUP BY 1 ORDER BY 2 LIMIT ${TURN_TOOLS_SHOWN}) n) AS tools,
      (SELECT coalesce(json_object_agg(status, n), '{}') FROM (SELECT r.payload->>'status' AS status, count(*)::int AS n FROM ${table} r
        WHERE r.turn_id = b.turn_id AND r.call_id IS NOT NULL AND r.kind = 'tool/result' GROUP BY 1) s) AS outcomes
    FROM ${table} b
    LEFT JOIN ${table} e ON e.turn_id = b.turn_id AND e.kind = 'turn/end' AND e.call_id IS NULL
    WHERE ${where.join(' AND ')}
    ORDER BY b.id DESC LIMIT $${values.length}`
  const rows = (await pool.query<PageRow>(sql, values)).rows
  const more = rows.length > plan.limit
  const kept = more ? rows.slice(0, plan.limit) : rows
  const turns = kept.map((row) => summarizeTurn(row.begin, row.end ?? undefined, row))
  return more ? { turns, next: encodeCursor(Number(kept.at(-1)!.id)) } : { turns }
}

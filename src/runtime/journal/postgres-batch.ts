import { duplicateError, type EventRow } from './events.js'
import { leaseHeld } from './postgres-coordination.js'

/** A named statement of a batch; its values come from `batchValues`. */
interface Statement {
  readonly name: string
  readonly text: string
}

/**
 * The two statements of a group commit, each one `INSERT` of the whole batch in push order:
 * - `whole` lands every row or none (a uniqueness refusal fails it), sending nothing back: the
 *   common case, without the speculative insertion `ON CONFLICT` costs per row;
 * - `exact` skips each row a uniqueness rule refuses and returns the rows that landed.
 * Holding a lease (`leased`), both check it in the same statement: none of the batch lands once it is fenced.
 */
export function batchStatements(table: string, hosts: string): { readonly open: BatchStatements; readonly leased: BatchStatements } {
  const insert = (where: string) => `INSERT INTO ${table} (turn_id, seq, kind, call_id, at, host, payload)
      SELECT turn_id, seq, kind, call_id, at, $7::text, payload
      FROM ROWS FROM (unnest($1::text[]), unnest($2::int[]), unnest($3::text[]), unnest($4::text[]), unnest($5::bigint[]), json_array_elements($6::json))
        WITH ORDINALITY AS b (turn_id, seq, kind, call_id, at, payload, ord)
      ${where} ORDER BY ord`
  const exact = ` ON CONFLICT DO NOTHING RETURNING turn_id AS "turnId", seq, kind, call_id AS "callId"`
  const lease = `WHERE ${leaseHeld(hosts, 7, 8)}`
  return {
    open: { whole: { name: 'seam_journal_batch', text: insert('') }, exact: { name: 'seam_journal_batch_exact', text: insert('') + exact } },
    leased: {
      whole: { name: 'seam_journal_batch_leased', text: insert(lease) },
      exact: { name: 'seam_journal_batch_exact_leased', text: insert(lease) + exact },
    },
  }
}

export interface BatchStatements {
  readonly whole: Statement
  readonly exact: Statement
}

/**
 * The values of a batch's statements: an array per key column, the payloads as one JSON array (each
 * is `JSON.stringify` output, spliced in as it is, so the driver escapes none of them and the server
 * parses them once), then the writer `host` (every row of a batch is this store's) and, holding a
 * lease, its `epoch`.
 */
export function batchValues(rows: readonly EventRow[], host: string, epoch: number | undefined): unknown[] {
  const values: unknown[] = [
    rows.map((row) => row.turnId),
    rows.map((row) => row.seq),
    rows.map((row) => row.kind),
    rows.map((row) => row.callId),
    rows.map((row) => row.at),
    `[${rows.map((row) => row.payload).join(',')}]`,
    host,
  ]
  if (epoch !== undefined) values.push(epoch)
  return values
}

/** The key columns of a row the `exact` statement landed. */
export interface Landed {
  readonly turnId: string
  readonly seq: number
  readonly kind: string
  readonly callId: string | null
}

/**
 * Per row of the batch, its duplicate error or `undefined` when it landed: each landed row is matched
 * to the batch by its identity, first occurrence first (a second copy of an event in one batch is its
 * duplicate, since the first took its keys).
 */
export function outcomesOf(rows: readonly EventRow[], landed: readonly Landed[], location: string): (Error | undefined)[] {
  const unclaimed = new Map<string, number>()
  for (const row of landed) {
    const key = identity(row)
    unclaimed.set(key, (unclaimed.get(key) ?? 0) + 1)
  }
  return rows.map((row) => {
    const key = identity(row)
    const left = unclaimed.get(key) ?? 0
    if (left === 0) return duplicateError(row, location)
    unclaimed.set(key, left - 1)
    return undefined
  })
}

/** An event's identity among the rows of one batch: its turn, seq, kind and call. */
function identity(row: Landed): string {
  return JSON.stringify([row.turnId, row.seq, row.kind, row.callId])
}

/** Whether `error` is PostgreSQL's refusal of a row by a unique index (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505'
}

/**
 * The PostgreSQL rows of `npm run bench -- journal`: time per call (a `tool/call` and its
 * `tool/result`, two appends one after the other) with 1 and 16 turns at once, for the journal with
 * group commit, the journal committing each append alone, and the raw `pg` driver doing two
 * autocommitted INSERTs a call into a plain table (a pool of 16) as the same run's baseline. The
 * journal holds a lease, as a root's does, so every write carries the fencing check. Rounds
 * interleaved; each mode in a schema of its own, dropped after. PostgreSQL at `SEAM_TEST_PG_URL`.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { type JournalEvent, type JournalStore, postgresJournal } from '../src/runtime/journal/index.js'
import { table, type Verdict } from './harness.js'

const PG_URL = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const CONCURRENCY = [1, 16] as const
const ROUNDS = 4
const ROUND_MS = 400
/** Issue 33: group commit at 16 turns at most this many times the raw per-call commits' time. */
const TARGET_16 = 0.6

interface Tally {
  calls: number
  ms: number
}

/** A writer of calls: `call(lane, n)` writes call `n` of lane `lane`, both events, each committed before the next. */
interface Writer {
  readonly label: string
  /** Commits and events so far, where the writer counts them (group commit's batches). */
  readonly commits?: { batches: number; events: number }
  call(lane: number, n: number): Promise<void>
  close(): Promise<void>
}

const content = [{ type: 'text', text: 'Ticket 42: printer on fire, status open.' }]

async function journalWriter(label: string, groupCommit: boolean, schema: string): Promise<Writer> {
  const host = `bench-${label}`
  const store: JournalStore = postgresJournal(PG_URL, { schema, hostId: host, groupCommit })
  await store.coordination.heartbeat(host, 600_000)
  const commits = { batches: 0, events: 0 }
  store.onCommit?.((events) => {
    commits.batches += 1
    commits.events += events
  })
  const turns: string[] = []
  const turnOf = async (lane: number): Promise<string> => {
    if (turns[lane] === undefined) {
      turns[lane] = randomUUID()
      await store.append({ kind: 'turn/begin', turnId: turns[lane]!, seq: 1, at: Date.now(), session: 'bench', subjectId: 'bench', generation: 1, owner: 'root' })
    }
    return turns[lane]!
  }
  return {
    label,
    commits,
    async call(lane, n) {
      const turnId = await turnOf(lane)
      const at = Date.now()
      const callId = `call-${n}`
      await store.append({ kind: 'tool/call', turnId, seq: 2 * n + 2, at, callId, name: 'lookup_ticket', arguments: '{"id":42}', generation: 1 } as JournalEvent)
      await store.append({ kind: 'tool/result', turnId, seq: 2 * n + 3, at, callId, status: 'completed', content, durationMs: 1 } as JournalEvent)
    },
    close: () => store.close(),
  }
}

async function rawWriter(admin: pg.Pool, schema: string): Promise<Writer> {
  await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    turn_id text NOT NULL, seq integer NOT NULL, kind text NOT NULL, call_id text, at bigint NOT NULL, payload json NOT NULL);
    CREATE UNIQUE INDEX ON ${schema}.events (turn_id, seq)`)
  const pool = new pg.Pool({ connectionString: PG_URL, max: 16 })
  const insert = `INSERT INTO ${schema}.events (turn_id, seq, kind, call_id, at, payload) VALUES ($1, $2, $3, $4, $5, $6)`
  const turns = new Map<number, string>()
  return {
    label: 'raw',
    async call(lane, n) {
      const turnId = turns.get(lane) ?? turns.set(lane, randomUUID()).get(lane)!
      const callId = `call-${n}`
      const at = Date.now()
      await pool.query({ name: 'raw_insert', text: insert, values: [turnId, 2 * n + 2, 'tool/call', callId, at, JSON.stringify({ name: 'lookup_ticket', arguments: '{"id":42}' })] })
      await pool.query({ name: 'raw_insert', text: insert, values: [turnId, 2 * n + 3, 'tool/result', callId, at, JSON.stringify({ status: 'completed', content })] })
    },
    close: () => pool.end(),
  }
}

/** `lanes` turns calling one call after another for `ms`; adds to `tally`. */
async function round(writer: Writer, lanes: number, ms: number, next: number[], tally: Tally): Promise<void> {
  const started = performance.now()
  const deadline = started + ms
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (performance.now() < deadline) {
        await writer.call(lane, next[lane]!)
        next[lane]! += 1
        tally.calls += 1
      }
    }),
  )
  tally.ms += performance.now() - started
}

const perCallUs = (tally: Tally) => (tally.ms * 1000) / tally.calls

/** The PostgreSQL section of the journal report; without a database, one line saying so. */
export async function runPostgres(): Promise<{ lines: string[]; verdicts: Verdict[] }> {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 2 })
  const prefix = `seam_bench_${randomUUID().replaceAll('-', '').slice(0, 10)}`
  const schemas: string[] = []
  try {
    try {
      await admin.query('SELECT 1')
    } catch (error) {
      return { lines: [`journal (PostgreSQL): skipped, no database at ${PG_URL} (${(error as Error).message})`], verdicts: [] }
    }
    const runs = []
    for (const lanes of CONCURRENCY) {
      const schema = (mode: string) => {
        const name = `${prefix}_${mode}_${lanes}`
        schemas.push(name)
        return name
      }
      const writers = [await journalWriter('grouped', true, schema('g')), await journalWriter('single', false, schema('s')), await rawWriter(admin, schema('r'))]
      const tallies = writers.map(() => ({ calls: 0, ms: 0 }))
      const next = writers.map(() => Array.from({ length: lanes }, () => 0))
      try {
        for (let index = -1; index < ROUNDS; index += 1) {
          const order = writers.map((_, i) => i)
          if (index % 2 === 1) order.reverse()
          for (const i of order) await round(writers[i]!, lanes, index < 0 ? 100 : ROUND_MS, next[i]!, index < 0 ? { calls: 0, ms: 0 } : tallies[i]!)
        }
      } finally {
        for (const writer of writers) await writer.close()
      }
      const { batches, events } = writers[0]!.commits!
      runs.push({ lanes, grouped: tallies[0]!, single: tallies[1]!, raw: tallies[2]!, perCommit: events / Math.max(1, batches) })
    }
    const us = (tally: Tally) => `${perCallUs(tally).toFixed(0)} µs`
    const times = (of: Tally, to: Tally) => `${(perCallUs(of) / perCallUs(to)).toFixed(2)}×`
    const rows = [
      ['raw pg, two INSERT commits a call (baseline)', ...runs.map((r) => us(r.raw))],
      ['journal, one commit per append', ...runs.map((r) => us(r.single))],
      ['journal, group commit', ...runs.map((r) => us(r.grouped))],
      ['  one commit per append ÷ raw', ...runs.map((r) => times(r.single, r.raw))],
      ['  group commit ÷ raw', ...runs.map((r) => times(r.grouped, r.raw))],
      ['  group commit ÷ one commit per append', ...runs.map((r) => times(r.grouped, r.single))],
      ['  group commit: appends per commit', ...runs.map((r) => r.perCommit.toFixed(1))],
    ]
    const sixteen = runs.find((r) => r.lanes === 16)!
    const ratio = perCallUs(sixteen.grouped) / perCallUs(sixteen.raw)
    return {
      lines: [
        `journal: durable PostgreSQL appends, time per call (two appends), leased (fencing checked), interleaved rounds, Node ${process.version}`,
        ...table(['', ...runs.map((r) => `${r.lanes} turn${r.lanes === 1 ? '' : 's'}`)], rows),
      ],
      verdicts: [
        {
          label: 'durable PostgreSQL appends, 16 turns: group commit against the raw driver',
          ratio,
          max: TARGET_16,
          pass: ratio <= TARGET_16,
          measured: us(sixteen.grouped),
          baseline: `raw pg: ${us(sixteen.raw)}`,
          target: `≤ ${TARGET_16}× the time`,
        },
      ],
    }
  } finally {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
    await admin.end()
  }
}

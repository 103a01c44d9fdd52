/**
 * Durable SQLite journal appends per second with 16 turns running at once (each appending its own
 * events one after another), for each SQLite driver this Node has (node:sqlite, better-sqlite3 where
 * its compiled module loads), side by side: group commit, one commit per append, and the raw driver
 * committing one plain INSERT per event (the library's own prepared statement, no journal) as the
 * same run's baseline. Same `synchronous=FULL`, WAL, fresh temporary files, rounds interleaved.
 * Then PostgreSQL (`journal-postgres.ts`): time per call at 1 and 16 turns, group commit, one commit
 * per append, and the raw `pg` driver doing two INSERT commits a call.
 * `npm run bench -- journal` (or `node --import tsx bench/journal.ts`)
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type JournalEvent, type JournalStore, sqliteJournal } from '../src/runtime/journal/index.js'
import { availableSqliteDrivers, openSqlite, type SqliteDatabase, type SqliteDriver } from '../src/runtime/journal/sqlite-driver.js'
import { type BenchReport, formatRate, isMain, printReport, table, type Verdict } from './harness.js'
import { runPostgres } from './journal-postgres.js'

const TURNS = 16
const CALLS_PER_TURN = 3
/** Short rounds, alternating the modes, so background disk load weighs on all alike. */
const ROUNDS = 6
const ROUND_MS = 500
const TARGET_RATIO = 5
/** The journal's one commit per append may cost at most this many raw commits (fsync dominates both). */
const MAX_OVERHEAD = 2
const LABELS: Readonly<Record<SqliteDriver, string>> = { node: 'node:sqlite', 'better-sqlite3': 'better-sqlite3' }

/** One turn as the runtime writes it: begin, call/result pairs, end; returns the events appended. */
async function appendTurn(store: JournalStore, turnId: string): Promise<number> {
  const at = Date.now()
  let seq = 0
  const append = (event: Record<string, unknown>) => store.append({ turnId, seq: ++seq, at, ...event } as JournalEvent)
  await append({ kind: 'turn/begin', session: 'bench', subjectId: 'bench', generation: 1, owner: 'root' })
  for (let call = 0; call < CALLS_PER_TURN; call += 1) {
    const callId = `call-${call}`
    await append({ kind: 'tool/call', callId, name: 'lookup_ticket', arguments: '{"id":42}', generation: 1 })
    const content = [{ type: 'text', text: 'Ticket 42: printer on fire, status open.' }]
    await append({ kind: 'tool/result', callId, status: 'completed', content, durationMs: 1 })
  }
  await append({ kind: 'turn/end', reason: 'ended' })
  return seq
}

interface Tally {
  appended: number
  ms: number
}

/** Keeps `TURNS` turns (random ids, as the runtime gives them) in flight for `ms`; adds to `tally`. */
async function round(store: JournalStore, ms: number, tally: Tally): Promise<void> {
  const started = performance.now()
  const deadline = started + ms
  const lane = async (): Promise<void> => {
    while (performance.now() < deadline) {
      // Not `tally.appended += await …`: that reads the count before the await and loses the other lanes' events.
      const events = await appendTurn(store, randomUUID())
      tally.appended += events
    }
  }
  await Promise.all(Array.from({ length: TURNS }, lane))
  tally.ms += performance.now() - started
}

/** The baseline: the raw driver, one autocommitted INSERT of an event's row per append, as a hand-written store would. */
function rawStore(path: string, driver: SqliteDriver): { round(ms: number, tally: Tally): void; close(): void } {
  const db: SqliteDatabase = openSqlite(path, { driver })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = FULL')
  db.exec(`CREATE TABLE events (id INTEGER PRIMARY KEY, turn_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    call_id TEXT, at INTEGER NOT NULL, payload TEXT NOT NULL) STRICT;
    CREATE UNIQUE INDEX events_turn_seq ON events (turn_id, seq)`)
  const insert = db.prepare('INSERT INTO events (turn_id, seq, kind, call_id, at, payload) VALUES (?, ?, ?, ?, ?, ?)')
  const payload = JSON.stringify({ kind: 'tool/result', status: 'completed', content: [{ type: 'text', text: 'Ticket 42: printer on fire, status open.' }] })
  return {
    round(ms, tally) {
      const started = performance.now()
      let turn = randomUUID()
      let seq = 0
      while (performance.now() - started < ms) {
        if (seq === 2 + 2 * CALLS_PER_TURN) [turn, seq] = [randomUUID(), 0]
        insert.run(turn, ++seq, 'tool/result', 'call-0', Date.now(), payload)
        tally.appended += 1
      }
      tally.ms += performance.now() - started
    },
    close: () => db.close(),
  }
}

interface DriverRun {
  readonly driver: SqliteDriver
  readonly grouped: Tally
  readonly single: Tally
  readonly raw: Tally
}

/** Every driver's three modes, their rounds interleaved across drivers too, so disk load weighs on all alike. */
async function measure(dir: string, drivers: readonly SqliteDriver[]): Promise<DriverRun[]> {
  const open = drivers.map((driver) => ({
    driver,
    grouped: sqliteJournal(join(dir, `${driver}-grouped.db`), { driver, groupCommit: true, synchronous: 'FULL' }),
    single: sqliteJournal(join(dir, `${driver}-single.db`), { driver, groupCommit: false, synchronous: 'FULL' }),
    raw: rawStore(join(dir, `${driver}-raw.db`), driver),
  }))
  try {
    const warmup: Tally = { appended: 0, ms: 0 }
    const runs: DriverRun[] = drivers.map((driver) => ({ driver, grouped: { appended: 0, ms: 0 }, single: { appended: 0, ms: 0 }, raw: { appended: 0, ms: 0 } }))
    for (let index = -1; index < ROUNDS; index += 1) {
      for (const [at, stores] of open.entries()) {
        const run = runs[at]!
        const ms = index < 0 ? 100 : ROUND_MS
        await round(stores.grouped, ms, index < 0 ? warmup : run.grouped)
        await round(stores.single, ms, index < 0 ? warmup : run.single)
        stores.raw.round(ms, index < 0 ? warmup : run.raw)
      }
    }
    return runs
  } finally {
    for (const stores of open) {
      await Promise.all([stores.grouped.close(), stores.single.close()])
      stores.raw.close()
    }
  }
}

const perSecond = (tally: Tally) => (tally.appended * 1000) / tally.ms

export async function run(): Promise<BenchReport> {
  const dir = mkdtempSync(join(tmpdir(), 'seam-bench-journal-'))
  try {
    const runs = await measure(dir, availableSqliteDrivers())
    const rate = (tally: Tally) => `${formatRate(perSecond(tally))}/s`
    const times = (of: Tally, to: Tally) => `${(perSecond(of) / perSecond(to)).toFixed(2)}×`
    const rows = [
      ['raw driver, one commit per INSERT (baseline)', ...runs.map((r) => rate(r.raw))],
      ['journal, one commit per append', ...runs.map((r) => rate(r.single))],
      ['journal, group commit', ...runs.map((r) => rate(r.grouped))],
      ['  one commit per append ÷ raw', ...runs.map((r) => times(r.single, r.raw))],
      ['  group commit ÷ raw', ...runs.map((r) => times(r.grouped, r.raw))],
      [`  group commit ÷ one commit per append (target ≥ ${TARGET_RATIO}×)`, ...runs.map((r) => times(r.grouped, r.single))],
    ]
    const verdicts: Verdict[] = runs.flatMap((r) => {
      const ratio = perSecond(r.grouped) / perSecond(r.single)
      const overhead = perSecond(r.raw) / perSecond(r.single)
      return [
        {
          label: `durable SQLite appends (${LABELS[r.driver]}), ${TURNS} turns: group commit`,
          ratio: 1 / ratio,
          max: 1 / TARGET_RATIO,
          pass: ratio >= TARGET_RATIO,
          measured: rate(r.grouped),
          baseline: `one commit per append: ${rate(r.single)}`,
          target: `≥ ${TARGET_RATIO}× the rate`,
        },
        {
          label: `durable SQLite appends (${LABELS[r.driver]}): one commit per append against the raw driver`,
          ratio: overhead,
          max: MAX_OVERHEAD,
          pass: overhead <= MAX_OVERHEAD,
          measured: rate(r.single),
          baseline: `raw driver: ${rate(r.raw)}`,
          target: `≤ ${MAX_OVERHEAD}× the time`,
        },
      ]
    })
    const postgres = await runPostgres()
    return {
      name: 'journal',
      lines: [
        `journal: durable SQLite appends, ${TURNS} concurrent turns, synchronous=FULL, WAL, interleaved rounds, Node ${process.version}`,
        ...table(['', ...runs.map((r) => LABELS[r.driver])], rows),
        '',
        ...postgres.lines,
      ],
      verdicts: [...verdicts, ...postgres.verdicts],
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) printReport(await run())

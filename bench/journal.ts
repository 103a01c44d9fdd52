/**
 * Durable SQLite journal appends per second with 16 turns running at once (each appending its own
 * events one after another), for each SQLite driver this Node has (node:sqlite, better-sqlite3 where
 * its compiled module loads), side by side: group commit, one commit per append, and the raw driver
 * committing one plain INSERT per event (the library's own prepared statement, no journal) as the
 * same run's baseline. Same `synchronous=FULL`, WAL, fresh temporary files, rounds interleaved.
 * Then, per call (its `tool/call` and `tool/result`, each durable before the next) at 1 turn and at
 * 16 concurrent turns: the journal against the raw driver writing the same events into a minimal
 * table (`bench/journal-raw.ts`), committing each INSERT at 1 turn and group-committing at 16.
 * Targets (issue 33): 16 turns at most 1.5× raw group commit, 1 turn at most 1.2× raw commits.
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
import { type BenchReport, formatMs, formatRate, isMain, median, printReport, table, type Verdict } from './harness.js'
import { runPostgres } from './journal-postgres.js'
import { type CallWriter, callEvents, commitEach, groupCommit } from './journal-raw.js'

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

/** Per-call rounds: wall time, since a durable commit waits for the disk. */
const CALL_ROUNDS = 8
const CALL_ROUND_MS = 300
const ONE_TURN_MAX = 1.2
const SIXTEEN_TURNS_MAX = 1.5

/** The journal writing a call's two events, each awaited, as the pipeline does. */
function journalWriter(store: JournalStore): CallWriter {
  return {
    async call(turnId, seq, callId) {
      const [call, result] = callEvents(turnId, seq, callId)
      await store.append(call as unknown as JournalEvent)
      await store.append(result as unknown as JournalEvent)
    },
    close: () => store.close(),
  }
}

/** `lanes` turns calling at once for `ms`: milliseconds of wall and of CPU time per call. */
async function callRound(writer: CallWriter, lanes: number, ms: number): Promise<[number, number]> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const deadline = started + ms
  let calls = 0
  const lane = async (): Promise<void> => {
    const turnId = randomUUID()
    for (let seq = 1; performance.now() < deadline; seq += 2) {
      await writer.call(turnId, seq, `call-${seq}`)
      calls += 1
    }
  }
  await Promise.all(Array.from({ length: lanes }, lane))
  const used = process.cpuUsage(cpu)
  return [(performance.now() - started) / calls, (used.user + used.system) / 1000 / calls]
}

interface CallRun {
  readonly driver: SqliteDriver
  /** Median milliseconds per call: [journal, raw] at 1 turn and at 16, wall time and CPU time. */
  readonly one: [number, number]
  readonly sixteen: [number, number]
  readonly oneCpu: [number, number]
  readonly sixteenCpu: [number, number]
  /** Median of each round's journal ÷ raw (the pair ran side by side). */
  readonly oneRatio: number
  readonly sixteenRatio: number
}

/** Per-call rounds for each driver, the journal and its raw floor alternating (A B, B A, …). */
async function measureCalls(dir: string, drivers: readonly SqliteDriver[]): Promise<CallRun[]> {
  const out: CallRun[] = []
  for (const driver of drivers) {
    const writers = {
      one: [journalWriter(sqliteJournal(join(dir, `${driver}-call-1.db`), { driver, synchronous: 'FULL' })), commitEach(join(dir, `${driver}-raw-1.db`), driver)],
      sixteen: [journalWriter(sqliteJournal(join(dir, `${driver}-call-16.db`), { driver, synchronous: 'FULL' })), groupCommit(join(dir, `${driver}-raw-16.db`), driver)],
    }
    try {
      const times = { one: [[], []] as number[][], sixteen: [[], []] as number[][] }
      const cpus = { one: [[], []] as number[][], sixteen: [[], []] as number[][] }
      for (let index = -1; index < CALL_ROUNDS; index += 1) {
        for (const [key, lanes] of [['one', 1], ['sixteen', TURNS]] as const) {
          const order = index % 2 === 0 ? [0, 1] : [1, 0]
          for (const side of order) {
            const [ms, cpu] = await callRound(writers[key][side]!, lanes, index < 0 ? 100 : CALL_ROUND_MS)
            if (index >= 0) times[key][side]!.push(ms)
            if (index >= 0) cpus[key][side]!.push(cpu)
          }
        }
      }
      const ratio = (pair: number[][]) => median(pair[0]!.map((ms, i) => ms / pair[1]![i]!))
      out.push({
        driver,
        one: [median(times.one[0]!), median(times.one[1]!)],
        sixteen: [median(times.sixteen[0]!), median(times.sixteen[1]!)],
        oneCpu: [median(cpus.one[0]!), median(cpus.one[1]!)],
        sixteenCpu: [median(cpus.sixteen[0]!), median(cpus.sixteen[1]!)],
        oneRatio: ratio(times.one),
        sixteenRatio: ratio(times.sixteen),
      })
    } finally {
      for (const writer of [...writers.one, ...writers.sixteen]) await writer.close()
    }
  }
  return out
}

export async function run(): Promise<BenchReport> {
  const dir = mkdtempSync(join(tmpdir(), 'seam-bench-journal-'))
  try {
    const runs = process.argv.includes('--calls-only') ? [] : await measure(dir, availableSqliteDrivers())
    const calls = await measureCalls(dir, availableSqliteDrivers())
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
    const both = (ms: number, cpu: number) => `${formatMs(ms)} (${formatMs(cpu)} CPU)`
    const callRows = [
      ['journal, 1 turn', ...calls.map((c) => both(c.one[0], c.oneCpu[0]))],
      ['raw driver, 1 turn, a commit per INSERT', ...calls.map((c) => both(c.one[1], c.oneCpu[1]))],
      [`  journal ÷ raw (target ≤ ${ONE_TURN_MAX}×)`, ...calls.map((c) => `${c.oneRatio.toFixed(2)}×`)],
      [`journal, ${TURNS} turns`, ...calls.map((c) => both(c.sixteen[0], c.sixteenCpu[0]))],
      [`raw driver, ${TURNS} turns, group commit`, ...calls.map((c) => both(c.sixteen[1], c.sixteenCpu[1]))],
      [`  journal ÷ raw (target ≤ ${SIXTEEN_TURNS_MAX}×)`, ...calls.map((c) => `${c.sixteenRatio.toFixed(2)}×`)],
    ]
    const callVerdicts: Verdict[] = calls.flatMap((c) => [
      {
        label: `SQLite (${LABELS[c.driver]}), 1 turn: a call against raw commits`,
        ratio: c.oneRatio,
        max: ONE_TURN_MAX,
        pass: c.oneRatio <= ONE_TURN_MAX,
        measured: formatMs(c.one[0]),
        baseline: `raw, a commit per INSERT: ${formatMs(c.one[1])}`,
        target: `≤ ${ONE_TURN_MAX}×`,
      },
      {
        label: `SQLite (${LABELS[c.driver]}), ${TURNS} turns: a call against raw group commit`,
        ratio: c.sixteenRatio,
        max: SIXTEEN_TURNS_MAX,
        pass: c.sixteenRatio <= SIXTEEN_TURNS_MAX,
        measured: formatMs(c.sixteen[0]),
        baseline: `raw group commit, minimal table: ${formatMs(c.sixteen[1])}`,
        target: `≤ ${SIXTEEN_TURNS_MAX}×`,
      },
    ])
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
    const postgres = process.argv.includes('--calls-only') ? { lines: [], verdicts: [] } : await runPostgres()
    return {
      name: 'journal',
      lines: [
        `journal: durable SQLite appends, ${TURNS} concurrent turns, synchronous=FULL, WAL, interleaved rounds, Node ${process.version}`,
        ...table(['', ...runs.map((r) => LABELS[r.driver])], rows),
        '',
        `per call (tool/call + tool/result, each durable before the next), wall time, ${CALL_ROUNDS} interleaved rounds of ${CALL_ROUND_MS} ms, medians`,
        ...table(['', ...calls.map((c) => LABELS[c.driver])], callRows),
        '',
        ...postgres.lines,
      ],
      verdicts: [...verdicts, ...callVerdicts, ...postgres.verdicts],
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) printReport(await run())

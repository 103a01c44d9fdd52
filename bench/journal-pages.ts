/**
 * `JournalStore.turns` on a SQLite journal of 1,000,000 events against the same queries on one of
 * 1,000 events, in the same run: a page answered from the indexes costs about the same whatever the
 * journal's size. The big journal is written straight into the store's own tables (same rows as
 * appends make, in one transaction) so the benchmark takes seconds, not minutes.
 * `npm run bench -- journal-pages`
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toRow } from '../src/runtime/journal/events.js'
import { type JournalEvent, type JournalStore, sqliteJournal } from '../src/runtime/journal/index.js'
import { openSqlite } from '../src/runtime/journal/sqlite-driver.js'
import type { TurnQuery } from '../src/seams/journal.js'
import { type BenchReport, formatMs, interleave, isMain, median, printReport, table, timeLoop, verdict } from './harness.js'

const BIG_EVENTS = 1_000_000
const SMALL_EVENTS = 100_000
const CALLS_PER_TURN = 3
/** begin + a call and a result per call + end. */
const EVENTS_PER_TURN = 2 + 2 * CALLS_PER_TURN
const SESSIONS = 1_000
const PAGES_PER_ROUND = 20
const TARGET = 3

/** The events of turn number `n`: every 500th uses `rare_tool`, every 2,500th has an `OUTCOME_UNKNOWN`. */
function turnEvents(n: number): JournalEvent[] {
  const turnId = `turn-${n}`
  const at = 1_750_000_000_000 + n * 1_000
  let seq = 0
  const events: JournalEvent[] = [
    { kind: 'turn/begin', turnId, seq: ++seq, at, session: `session-${n % SESSIONS}`, subjectId: 'u1', generation: 1, owner: 'root' },
  ]
  for (let call = 0; call < CALLS_PER_TURN; call += 1) {
    const callId = `c${call}`
    const name = call === 0 && n % 500 === 0 ? 'rare_tool' : 'lookup_ticket'
    events.push({ kind: 'tool/call', turnId, seq: ++seq, at, callId, name, arguments: `{"id":${n}}`, generation: 1 })
    const unknown = call === 2 && n % 2_500 === 0
    events.push({
      kind: 'tool/result',
      turnId,
      seq: ++seq,
      at: at + 3,
      callId,
      status: unknown ? 'failed' : 'completed',
      ...(unknown ? { code: 'OUTCOME_UNKNOWN' as const } : {}),
      content: [{ type: 'text', text: `Ticket ${n}: printer on fire, status open.` }],
      durationMs: 3,
    })
  }
  events.push({ kind: 'turn/end', turnId, seq: ++seq, at: at + 9, reason: 'ended' })
  return events
}

/** Creates the journal through the store (schema and indexes), then fills it in one transaction. */
async function generate(path: string, events: number): Promise<void> {
  await sqliteJournal(path).close()
  // The driver sqliteJournal picks by default on this Node.
  const db = openSqlite(path)
  try {
    db.exec('PRAGMA synchronous = OFF')
    const addTurn = db.prepare('INSERT INTO seam_journal_turns (turn_id) VALUES (?)')
    const insert = db.prepare(
      'INSERT INTO seam_journal_events (turn, seq, kind, call_id, at, host, payload) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    db.transaction(() => {
      for (let n = 1; n <= events / EVENTS_PER_TURN; n += 1) {
        const turn = Number(addTurn.run(`turn-${n}`).lastInsertRowid)
        for (const event of turnEvents(n)) {
          const row = toRow(event, 'bench-host:1')
          insert.run(turn, row.seq, row.kind, row.callId, row.at, row.host, row.payload)
        }
      }
    })()
  } finally {
    db.close()
  }
}

/** Each query: the first page, and a page from the middle of the journal (by following `next`). */
const QUERIES: readonly { label: string; query: TurnQuery }[] = [
  { label: 'newest 50', query: {} },
  { label: 'session', query: { session: 'session-7', limit: 5 } },
  { label: 'tool (in every turn)', query: { tool: 'lookup_ticket' } },
  { label: 'tool (1 turn in 500)', query: { tool: 'rare_tool', limit: 5 } },
  { label: 'code OUTCOME_UNKNOWN', query: { code: 'OUTCOME_UNKNOWN', limit: 2 } },
  { label: 'session + status', query: { session: 'session-7', status: 'completed', limit: 5 } },
]

function pages(store: JournalStore, query: TurnQuery) {
  return async () => {
    // The page after the first one exercises the cursor too.
    const sample = await timeLoop(PAGES_PER_ROUND, async () => {
      const first = await store.turns(query)
      if (first.turns.length === 0) throw new Error(`bench query matched nothing: ${JSON.stringify(query)}`)
      if (first.next !== undefined) await store.turns({ ...query, before: first.next })
    })
    return sample
  }
}

export async function run(): Promise<BenchReport> {
  const dir = mkdtempSync(join(tmpdir(), 'seam-bench-pages-'))
  try {
    const generating = performance.now()
    await generate(join(dir, 'big.db'), BIG_EVENTS)
    const generatedMs = performance.now() - generating
    await generate(join(dir, 'small.db'), SMALL_EVENTS)
    // Opened as the console would: an existing journal, indexes already there.
    const big = sqliteJournal(join(dir, 'big.db'))
    const small = sqliteJournal(join(dir, 'small.db'))
    try {
      const rows: string[][] = []
      const verdicts = []
      for (const { label, query } of QUERIES) {
        const [candidate, baseline] = await interleave(
          [
            { label: `${label} (1M)`, round: pages(big, query) },
            { label: `${label} (small)`, round: pages(small, query) },
          ],
          { rounds: 5, warmup: 1 },
        )
        const perPage = (m: typeof candidate) => median(m!.samples.map((s) => s.ms / s.ops))
        const v = verdict(`${label}: page time, 1M events vs 100k`, candidate!, baseline!, TARGET)
        verdicts.push(v)
        rows.push([label, formatMs(perPage(candidate)), formatMs(perPage(baseline)), `${v.ratio.toFixed(2)}×`])
      }
      return {
        name: 'journal-pages',
        lines: [
          `journal-pages: JournalStore.turns on SQLite, ${BIG_EVENTS.toLocaleString('en-US')} events (${(BIG_EVENTS / EVENTS_PER_TURN).toLocaleString('en-US')} turns, generated in ${(generatedMs / 1000).toFixed(1)} s) vs 100,000 events`,
          '  time per query = first page + the page after it (cursor)',
          ...table(['query', '1M events', '100k events', 'ratio'], rows).map((line) => `  ${line}`),
        ],
        verdicts,
      }
    } finally {
      await Promise.all([big.close(), small.close()])
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) printReport(await run())

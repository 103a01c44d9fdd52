/**
 * Durable SQLite journal appends per second with 16 turns running at once (each appending its own
 * events one after another), group commit against one transaction and fsync per append. Same run,
 * same `synchronous=FULL`, fresh temporary files. `node --import tsx bench/journal.ts`
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type JournalEvent, type JournalStore, sqliteJournal } from '../src/runtime/journal/index.js'
import { type BenchReport, isMain, printReport } from './harness.js'

const TURNS = 16
const CALLS_PER_TURN = 3
/** Short rounds, alternating the two modes, so background disk load weighs on both alike. */
const ROUNDS = 6
const ROUND_MS = 500
const TARGET_RATIO = 5

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

export async function run(): Promise<BenchReport> {
  const dir = mkdtempSync(join(tmpdir(), 'seam-bench-journal-'))
  const grouped = sqliteJournal(join(dir, 'grouped.db'), { groupCommit: true, synchronous: 'FULL' })
  const single = sqliteJournal(join(dir, 'single.db'), { groupCommit: false, synchronous: 'FULL' })
  try {
    const warmup: Tally = { appended: 0, ms: 0 }
    await round(grouped, 100, warmup)
    await round(single, 100, warmup)
    const tallies = { grouped: { appended: 0, ms: 0 }, single: { appended: 0, ms: 0 } }
    for (let index = 0; index < ROUNDS; index += 1) {
      await round(grouped, ROUND_MS, tallies.grouped)
      await round(single, ROUND_MS, tallies.single)
    }
    const perSecond = (tally: Tally) => (tally.appended * 1000) / tally.ms
    const ratio = perSecond(tallies.grouped) / perSecond(tallies.single)
    const rate = (tally: Tally) => `${Math.round(perSecond(tally)).toLocaleString('en-US').padStart(9)} appends/s`
    // Time per append of group commit relative to one commit per append: ≤ 1/5 is ≥ 5× the rate.
    const timeRatio = 1 / ratio
    return {
      name: 'journal',
      lines: [
        `journal: durable SQLite appends, ${TURNS} concurrent turns, synchronous=FULL, WAL, interleaved rounds`,
        `  group commit         ${rate(tallies.grouped)}`,
        `  one commit per append${rate(tallies.single)}`,
        `  ratio                ${ratio.toFixed(1)}× (target ≥ ${TARGET_RATIO}×)`,
      ],
      verdicts: [
        {
          label: `durable SQLite appends, ${TURNS} turns: group commit`,
          ratio: timeRatio,
          max: 1 / TARGET_RATIO,
          pass: ratio >= TARGET_RATIO,
          measured: `${Math.round(perSecond(tallies.grouped)).toLocaleString('en-US')}/s`,
          baseline: `one commit per append: ${Math.round(perSecond(tallies.single)).toLocaleString('en-US')}/s`,
          target: `≥ ${TARGET_RATIO}× the rate`,
        },
      ],
    }
  } finally {
    await Promise.all([grouped.close(), single.close()])
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) printReport(await run())

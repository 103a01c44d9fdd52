/**
 * Issue 14: a host that runs for days on the default journal. 1,000,000 calls in 100,000 turns of
 * 10 calls each (`createRoot` without a journal: the default `memoryJournal()`), one after another.
 * Prints the heap after a full GC at the start, half way and at the end, and the time per call
 * (its turn's begin and end included) of the first and the last 100,000 calls; the first window is
 * the baseline. Targets: the heap flat over the second half (≤ 1.1× plus 8 MB), the last window's
 * per-call cost ≤ 1.25× the first's. `--calls N` runs a shorter soak (windows shrink to a tenth).
 * `node --import tsx bench/soak.ts [--calls 100000]`
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createRoot, type Root } from '../src/index.js'
import { type BenchReport, budget, formatBytes, formatMs, isMain, numberOption, printReport, table } from './harness.js'
import { ARGUMENTS_TEXT as ARGUMENTS, lookupPlugin as plugin, NAME } from './lookup-tool.js'

const CALLS_PER_TURN = 10
const WINDOW = 100_000

/** `count` turns of `CALLS_PER_TURN` calls each, one after another. */
async function runTurns(root: Root, count: number, from = 0): Promise<void> {
  for (let t = from; t < from + count; t += 1) {
    const turn = await root.beginTurn({ session: `s${t % 100}`, principal: { subjectId: 'bench' } })
    for (let c = 0; c < CALLS_PER_TURN; c += 1) {
      const outcome = await turn.tools.execute({ callId: `c${c}`, name: NAME, arguments: ARGUMENTS })
      if (outcome.status !== 'completed') throw new Error(`soak call failed: ${outcome.code}`)
    }
    await turn.end()
  }
}

/** A full collection without starting Node with `--expose-gc`. */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed) return exposed
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
}

async function settledHeap(gc: () => void): Promise<number> {
  for (let index = 0; index < 3; index += 1) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  return process.memoryUsage().heapUsed
}

export async function run(): Promise<BenchReport> {
  const calls = Math.max(CALLS_PER_TURN * 10, Math.round(numberOption('calls', 1_000_000) / CALLS_PER_TURN) * CALLS_PER_TURN)
  const turns = calls / CALLS_PER_TURN
  const window = Math.min(WINDOW, Math.floor(calls / 10 / CALLS_PER_TURN) * CALLS_PER_TURN)
  const gc = collector()
  // Warm the JIT on a root of its own, so the first window measures the journal, not the compiler.
  const warm = await createRoot({ plugin, repair: false })
  await runTurns(warm, 1_000)
  await warm.close()
  const root = await createRoot({ plugin, repair: false })
  try {
    const heapStart = await settledHeap(gc)
    let heapMiddle = heapStart
    let firstMs = 0
    let lastMs = 0
    let windowStarted = performance.now()
    const started = performance.now()
    for (let t = 0; t < turns; t += 1) {
      const done = t * CALLS_PER_TURN
      if (done === window) firstMs = performance.now() - windowStarted
      if (done === calls - window) windowStarted = performance.now()
      if (t === turns / 2) heapMiddle = await settledHeap(gc)
      await runTurns(root, 1, t)
    }
    lastMs = performance.now() - windowStarted
    const totalMs = performance.now() - started
    const heapEnd = await settledHeap(gc)
    const first = firstMs / window
    const last = lastMs / window
    const heapBudget = heapMiddle * 1.1 + 8 * 1_048_576
    const n = (v: number) => v.toLocaleString('en-US')
    return {
      name: 'soak',
      lines: [
        `soak: ${n(calls)} calls in ${n(turns)} turns of ${CALLS_PER_TURN}, default memory journal, in ${(totalMs / 1000).toFixed(1)} s`,
        ...table(
          ['', 'value'],
          [
            ['heap at start (after GC)', formatBytes(heapStart)],
            ['heap half way', formatBytes(heapMiddle)],
            ['heap at end', formatBytes(heapEnd)],
            [`per call, first ${n(window)} calls`, formatMs(first)],
            [`per call, last ${n(window)} calls`, formatMs(last)],
          ],
        ),
      ],
      verdicts: [
        budget(`heap at the end of ${n(calls)} calls (start ${formatBytes(heapStart)})`, heapEnd, heapBudget, formatBytes, `half way: ${formatBytes(heapMiddle)}`),
        {
          label: `per call, last ${n(window)} vs first ${n(window)}`,
          ratio: last / first,
          max: 1.25,
          pass: last / first <= 1.25,
          measured: formatMs(last),
          baseline: `first ${n(window)}: ${formatMs(first)}`,
          target: '≤ 1.25×',
        },
      ],
    }
  } finally {
    await root.close()
  }
}

if (isMain(import.meta.url)) printReport(await run())

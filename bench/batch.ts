/**
 * Issue 4: wall time of 1,000 batches of 16 safe calls whose bodies each wait 1 ms, through
 * `executeBatch` with `maxParallel: 16` (memory journal, no hooks), against `Promise.all` over the
 * same bodies with no pipeline. Target: at most 1.25× `Promise.all`. `node --import tsx bench/batch.ts`
 */
import { setTimeout as wait } from 'node:timers/promises'
import { z } from 'zod'
import { createRoot, definePlugin, defineTool, memoryJournal, type ToolCall } from '../src/index.js'
import {
  type BenchReport,
  type Contender,
  formatMs,
  interleave,
  isMain,
  type Measured,
  msPerOp,
  pairedRatio,
  formatRatio,
  printReport,
  type Sample,
  table,
  timeLoop,
  verdict,
} from './harness.js'

const BATCHES = 1_000
const CALLS = 16
const ROUNDS = 10
const BATCHES_PER_ROUND = BATCHES / ROUNDS
const WARMUP = 2
const TARGET = 1.25

/** The body both sides run: wait 1 ms, return a small value. */
async function body(args: { n: number }): Promise<{ n: number }> {
  await wait(1)
  return { n: args.n }
}

const plugin = definePlugin({
  name: 'bench',
  setup(ctx) {
    ctx.addTool(
      'sleep_1ms',
      defineTool({ description: 'Waits 1 ms.', input: z.object({ n: z.number() }), approval: 'never', isConcurrencySafe: () => true, execute: body }),
    )
  },
})

const calls: ToolCall[] = Array.from({ length: CALLS }, (_, n) => ({ callId: `c${n}`, name: 'sleep_1ms', arguments: `{"n":${n}}` }))

/** One round: a fresh root (untimed), one turn per batch (call ids are unique per turn). */
async function pipelineRound(): Promise<Sample> {
  const root = await createRoot({ plugin, journal: memoryJournal(), defaults: { maxParallel: CALLS } })
  try {
    const turns = await Promise.all(Array.from({ length: BATCHES_PER_ROUND }, () => root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' } })))
    const sample = await timeLoop(BATCHES_PER_ROUND, async (index) => {
      const outcomes = await turns[index]!.tools.executeBatch(calls)
      if (outcomes.length !== CALLS || outcomes.some((o) => o.status !== 'completed')) throw new Error('bench batch failed')
    })
    await Promise.all(turns.map((turn) => turn.end()))
    return sample
  } finally {
    await root.close()
  }
}

function baselineRound(): Promise<Sample> {
  const args = calls.map((_, n) => ({ n }))
  return timeLoop(BATCHES_PER_ROUND, () => Promise.all(args.map(body)))
}

export async function run(): Promise<BenchReport> {
  const contenders: Contender[] = [
    { label: `Promise.all over ${CALLS} bodies`, round: baselineRound },
    { label: `executeBatch, ${CALLS} safe calls, maxParallel ${CALLS}`, round: pipelineRound },
  ]
  const [base, pipeline] = (await interleave(contenders, { rounds: ROUNDS, warmup: WARMUP })) as [Measured, Measured]
  const wall = (m: Measured) => formatMs(msPerOp(m) * BATCHES)
  const row = (m: Measured, ratio: string) => [m.label, wall(m), formatMs(msPerOp(m)), ratio]
  return {
    name: 'batch',
    lines: [
      `batch: ${BATCHES.toLocaleString('en-US')} batches of ${CALLS} calls whose bodies wait 1 ms; ${ROUNDS} interleaved rounds of ${BATCHES_PER_ROUND}, medians`,
      ...table(['', `wall per ${BATCHES.toLocaleString('en-US')}`, 'per batch', 'ratio'], [row(base, '1.00×'), row(pipeline, formatRatio(pairedRatio(pipeline, base)))]),
    ],
    verdicts: [verdict('executeBatch vs Promise.all', pipeline, base, TARGET)],
  }
}

if (isMain(import.meta.url)) printReport(await run())

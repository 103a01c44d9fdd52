/**
 * Issue 14: what a turn costs as the catalog grows. `beginTurn` + reading `turn.capabilities.tools`
 * (memory journal, `turn/begin` journaled) at 10, 1,000 and 10,000 tools, and at 10,000 tools of
 * which 1,000 are gated by 10 distinct permissions (half granted), against reading a prebuilt frozen
 * array (the floor of "the catalog is already there"). Turns are ended after each round, untimed.
 * Targets: ≤ 20 µs per turn at 10,000 tools (CPU time: on a shared machine the wall time includes
 * waiting for a core); 10,000 tools ≤ 1.5× 10 tools (O(1) in the tool count). Each timed round
 * starts after a pause in which the collector finishes what earlier rounds left it (`settle`): the
 * heap of four roots' schemas made that work land on random rounds (a row at 47 µs in one run, 12 µs
 * in the next).
 * `node --import tsx bench/turn.ts`
 */
import { z } from 'zod'
import { createRoot, definePlugin, defineTool, type PermissionHost, type Root, type Turn } from '../src/index.js'
import {
  type BenchReport,
  budget,
  type Contender,
  cpuMsPerOp,
  formatMs,
  formatRatio,
  interleave,
  isMain,
  type Measured,
  msPerOp,
  pairedRatio,
  printReport,
  type Sample,
  table,
  timed,
} from './harness.js'

const TURNS_PER_ROUND = 500
const ROUNDS = 20
const WARMUP = 2
const BUDGET_MS = 0.02
const SIZES = [10, 1_000, 10_000] as const
const GATED = 1_000
const PERMISSIONS = 10

function catalog(size: number, gated: number): ReturnType<typeof definePlugin> {
  const input = z.object({ id: z.string() })
  const tools = Array.from({ length: size }, (_, n) =>
    defineTool({
      description: `Tool number ${n}.`,
      input,
      approval: 'never',
      permissions: n < gated ? [`perm-${n % PERMISSIONS}`] : undefined,
      execute: async ({ id }) => ({ id, n }),
    }),
  )
  return definePlugin({
    name: 'bench',
    setup(ctx) {
      for (let n = 0; n < tools.length; n += 1) ctx.addTool(`tool_${n}`, tools[n]!)
    },
  })
}

/** Grants the even-numbered permissions, synchronously (a host reading a role table). */
const permissions: PermissionHost = { check: (permission) => Number(permission.slice(5)) % 2 === 0 }

function turnRound(root: Root, expected: number): () => Promise<Sample> {
  return async () => {
    const turns: Turn[] = []
    const sample = await timed(TURNS_PER_ROUND, async () => {
      for (let index = 0; index < TURNS_PER_ROUND; index += 1) {
        const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' } })
        if (turn.capabilities.tools.length !== expected) throw new Error(`a turn saw ${turn.capabilities.tools.length} tools, expected ${expected}`)
        turns.push(turn)
      }
    })
    for (const turn of turns) await turn.end()
    return sample
  }
}

function frozenRound(size: number): () => Promise<Sample> {
  const tools = Object.freeze(Array.from({ length: size }, (_, n) => Object.freeze({ name: `tool_${n}` })))
  const read = async () => tools
  return () =>
    timed(TURNS_PER_ROUND, async () => {
      for (let index = 0; index < TURNS_PER_ROUND; index += 1) {
        if ((await read()).length !== size) throw new Error('unreachable')
      }
    })
}

export async function run(): Promise<BenchReport> {
  const roots: Root[] = []
  try {
    const contenders: Contender[] = [{ label: 'baseline: await a prebuilt frozen array', round: frozenRound(10_000) }]
    for (const size of SIZES) {
      const root = await createRoot({ plugin: catalog(size, 0), repair: false })
      roots.push(root)
      contenders.push({ label: `beginTurn + catalog, ${size.toLocaleString('en-US')} tools`, round: turnRound(root, size) })
    }
    const gatedRoot = await createRoot({ plugin: catalog(10_000, GATED), permissions, repair: false })
    roots.push(gatedRoot)
    contenders.push({
      label: `beginTurn + catalog, 10,000 tools, ${GATED.toLocaleString('en-US')} gated by ${PERMISSIONS} permissions`,
      round: turnRound(gatedRoot, 10_000 - GATED / 2),
    })
    const measured = await interleave(contenders, { rounds: ROUNDS, warmup: WARMUP, settle: true })
    const [base, small, , large, gated] = measured as [Measured, Measured, Measured, Measured, Measured]
    const rows = measured.map((m) => [
      m.label,
      formatMs(msPerOp(m)),
      formatMs(cpuMsPerOp(m)),
      m === base ? '1.00×' : formatRatio(pairedRatio(m, base)),
      m === base ? '' : formatRatio(pairedRatio(m, small)),
    ])
    const show = (ms: number) => `${formatMs(ms)} CPU`
    return {
      name: 'turn',
      lines: [
        `turn: beginTurn + reading turn.capabilities.tools, memory journal; ${ROUNDS} interleaved rounds of ${TURNS_PER_ROUND} turns, medians`,
        ...table(['', 'per turn', 'CPU per turn', 'vs frozen array', 'vs 10 tools'], rows),
      ],
      verdicts: [
        budget('beginTurn + catalog at 10,000 tools', cpuMsPerOp(large), BUDGET_MS, show, `frozen array: ${formatMs(cpuMsPerOp(base))} CPU`),
        budget('the same, 1,000 of them permission-gated', cpuMsPerOp(gated), BUDGET_MS, show, `frozen array: ${formatMs(cpuMsPerOp(base))} CPU`),
        {
          label: 'a turn at 10,000 tools vs at 10 tools',
          ratio: cpuMsPerOp(large) / cpuMsPerOp(small),
          max: 1.5,
          pass: cpuMsPerOp(large) / cpuMsPerOp(small) <= 1.5,
          measured: show(cpuMsPerOp(large)),
          baseline: `10 tools: ${show(cpuMsPerOp(small))}`,
          target: '≤ 1.5×',
        },
      ],
    }
  } finally {
    await Promise.all(roots.map((root) => root.close()))
  }
}

if (isMain(import.meta.url)) printReport(await run())

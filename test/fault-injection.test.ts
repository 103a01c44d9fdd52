import { describe, expect, it } from 'vitest'
import { runScenario } from './faults/scenario.js'

/**
 * The reliability campaign in the suite: seeded, reproducible scenarios in which hooks, guards,
 * wrappers, ports, the permission host and the journal hang, throw, reject late or answer nonsense,
 * with caller aborts and closes at random moments. After each: every call settled, outcomes in model
 * order, no body ran when it must not (or before its durable tool/call), one tool/result per
 * tool/call, close resolved, nothing unhandled. `SEAM_FAULT_SCENARIOS` sets how many (`npm run soak`
 * runs many more), `SEAM_FAULT_SEED` the first seed; a failure names its seed to replay it alone.
 */
const SCENARIOS = Number(process.env.SEAM_FAULT_SCENARIOS ?? 2_000)
const FIRST_SEED = Number(process.env.SEAM_FAULT_SEED ?? 1)
/** Scenarios run this many at a time: each spends most of its time waiting on short timers. */
const AT_ONCE = 40

describe('fault injection', () => {
  it(`keeps every promise through ${SCENARIOS} seeded scenarios from seed ${FIRST_SEED}`, { timeout: Math.max(60_000, SCENARIOS * 20) }, async () => {
    const escaped: unknown[] = []
    const onUnhandled = (reason: unknown) => escaped.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const problems: string[] = []
    try {
      for (let start = FIRST_SEED; start < FIRST_SEED + SCENARIOS; start += AT_ONCE) {
        const seeds = Array.from({ length: Math.min(AT_ONCE, FIRST_SEED + SCENARIOS - start) }, (_, i) => start + i)
        const found = await Promise.all(seeds.map((seed) => runScenario(seed).catch((error: unknown) => [`seed ${seed}: threw ${String(error)}`])))
        problems.push(...found.flat())
        await new Promise((resolve) => setImmediate(resolve))
        if (escaped.length > 0) problems.push(`seeds ${seeds[0]}–${seeds.at(-1)}: unhandled rejection ${String(escaped.splice(0)[0])}`)
        if (problems.length >= 20) break
      }
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
    expect(problems).toEqual([])
  })
})

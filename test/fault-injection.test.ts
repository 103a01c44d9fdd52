import { monitorEventLoopDelay } from 'node:perf_hooks'
import { describe, expect, it } from 'vitest'
import { runScenario } from './faults/scenario.js'

/**
 * The reliability campaign in the suite: seeded, reproducible scenarios in which hooks, guards,
 * wrappers, ports, the permission host and the journal hang, throw, reject late or answer nonsense,
 * with caller aborts and closes at random moments. After each: every call settled, outcomes in model
 * order, no body ran when it must not (or before its durable tool/call), one tool/result per
 * tool/call, close resolved, nothing unhandled. `SEAM_FAULT_SCENARIOS` sets how many (`npm run soak`
 * runs many more), `SEAM_FAULT_SEED` the first seed, `SEAM_FAULT_AT_ONCE` how many run at a time;
 * a failure names its seed to replay it alone.
 *
 * A scenario that settles past its 3 s bound fails, unless the event loop was starved meanwhile
 * (a timer fired `STARVED_MS` or more late in its group): on a saturated machine every deadline
 * fires late by the loop's delay, once per stage, and that is the machine, not a lost call. One
 * that never settles (23 s) always fails.
 */
const SCENARIOS = Number(process.env.SEAM_FAULT_SCENARIOS ?? 2_000)
const FIRST_SEED = Number(process.env.SEAM_FAULT_SEED ?? 1)
/** Scenarios run this many at a time: each spends most of its time waiting on short timers. */
const AT_ONCE = Number(process.env.SEAM_FAULT_AT_ONCE ?? 40)
const STARVED_MS = 100

describe('fault injection', () => {
  it(`keeps every promise through ${SCENARIOS} seeded scenarios from seed ${FIRST_SEED}`, { timeout: Math.max(60_000, SCENARIOS * 40) }, async () => {
    const escaped: unknown[] = []
    const onUnhandled = (reason: unknown) => escaped.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const problems: string[] = []
    const loop = monitorEventLoopDelay({ resolution: 10 })
    loop.enable()
    let late = 0
    let latest = 0
    let worstDelay = 0
    try {
      for (let start = FIRST_SEED; start < FIRST_SEED + SCENARIOS; start += AT_ONCE) {
        const seeds = Array.from({ length: Math.min(AT_ONCE, FIRST_SEED + SCENARIOS - start) }, (_, i) => start + i)
        loop.reset()
        const reports = await Promise.all(seeds.map((seed) => runScenario(seed).catch((error: unknown) => ({ problems: [`seed ${seed}: threw ${String(error)}`], late: undefined }))))
        const delayMs = loop.max / 1e6
        worstDelay = Math.max(worstDelay, delayMs)
        for (const report of reports) {
          problems.push(...report.problems)
          if (report.late === undefined) continue
          if (delayMs < STARVED_MS) problems.push(`${report.late.problem}; the event loop's worst delay meanwhile was ${Math.round(delayMs)} ms`)
          late += 1
          latest = Math.max(latest, report.late.ms)
        }
        await new Promise((resolve) => setImmediate(resolve))
        if (escaped.length > 0) problems.push(`seeds ${seeds[0]}–${seeds.at(-1)}: unhandled rejection ${String(escaped.splice(0)[0])}`)
        if (problems.length >= 20) break
      }
    } finally {
      loop.disable()
      process.off('unhandledRejection', onUnhandled)
    }
    if (late > 0 || SCENARIOS >= 10_000) {
      console.log(`${SCENARIOS} scenarios, ${AT_ONCE} at a time: ${late} settled past 3 s (the latest after ${Math.round(latest)} ms) while the event loop was starved (worst delay ${Math.round(worstDelay)} ms); ${problems.length} problems`)
    }
    expect(problems).toEqual([])
  })
})

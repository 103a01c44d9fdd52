import { setImmediate as nextTurn } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { arming } from './arming.js'

/** A run that counts how often it is armed; `finished` is set as a body that settled at once. */
function run() {
  return { finished: false, armed: 0, arm() { this.armed += 1 } }
}

describe('arming', () => {
  it('arms each run still going once at the end of the event-loop turn, dropping finished ones as they pile up', async () => {
    const runs = Array.from({ length: 200 }, () => run())
    for (const [index, r] of runs.entries()) {
      arming.defer(r)
      // Every other body settled in the step it started in, as most do.
      if (index % 2 === 0) r.finished = true
    }
    expect(runs.every((r) => r.armed === 0)).toBe(true)
    await nextTurn()
    expect(runs.filter((r) => !r.finished).map((r) => r.armed)).toEqual(Array(100).fill(1))
    // Compacting dropped most finished runs before the end of the turn: they were never armed.
    expect(runs.filter((r) => r.finished && r.armed > 0).length).toBeLessThan(50)
  })

  it('arms the runs deferred in a later turn in that turn, and none of an earlier one again', async () => {
    const first = run()
    arming.defer(first)
    await nextTurn()
    const later = Array.from({ length: 70 }, () => run())
    for (const r of later) arming.defer(r)
    await nextTurn()
    expect([first.armed, ...later.map((r) => r.armed)]).toEqual(Array(71).fill(1))
  })
})

import { describe, expect, it } from 'vitest'
import { epochAt } from './clock.js'

describe('epochAt', () => {
  it('gives the wall clock time of a performance.now() reading, in whole milliseconds', () => {
    const before = Date.now()
    const at = epochAt(performance.now())
    const after = Date.now()
    expect(Number.isSafeInteger(at)).toBe(true)
    // Rounding may put it half a millisecond past either side.
    expect(at).toBeGreaterThanOrEqual(before - 1)
    expect(at).toBeLessThanOrEqual(after + 1)
  })

  it('keeps two readings of one call as far apart as the monotonic clock says', () => {
    const start = performance.now()
    const end = start + 250.4
    expect(epochAt(end) - epochAt(start)).toBeGreaterThanOrEqual(249)
    expect(epochAt(end) - epochAt(start)).toBeLessThanOrEqual(251)
  })
})

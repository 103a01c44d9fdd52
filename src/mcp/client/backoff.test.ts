import { describe, expect, it } from 'vitest'
import { backoffDelay } from './backoff.js'

describe('backoffDelay', () => {
  it('doubles from 100 ms up to 5 s by default', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((retry) => backoffDelay(retry))).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000])
  })

  it('honours the host bounds, even for very many retries', () => {
    const options = { initialDelayMs: 50, maxDelayMs: 120 }
    expect([0, 1, 2, 1_000].map((retry) => backoffDelay(retry, options))).toEqual([50, 100, 120, 120])
  })
})

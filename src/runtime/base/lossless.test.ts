import { describe, expect, it } from 'vitest'
import { findLossy, freezeLossless } from './lossless.js'

describe('freezeLossless', () => {
  it('freezes every object and array of a lossless value, already frozen parts included', () => {
    const inner = Object.freeze({ tags: ['a', 'b'] })
    const value = { id: 'T-1', items: [{ n: 1 }, { n: 2 }], inner, nothing: null }
    expect(freezeLossless(value)).toBeUndefined()
    expect(Object.isFrozen(value)).toBe(true)
    expect(Object.isFrozen(value.items)).toBe(true)
    expect(Object.isFrozen(value.items[1])).toBe(true)
    expect(Object.isFrozen(inner.tags)).toBe(true)
  })

  it('finds what findLossy finds, with the same path, inside frozen objects too', () => {
    const sparse = [1, 2, 3]
    delete sparse[1]
    const cases: unknown[] = [
      { a: [1, { b: undefined }] },
      Object.freeze({ a: Object.freeze([Number.NaN]) }),
      { when: new Date(0) },
      sparse,
      { n: -0 },
    ]
    for (const value of cases) {
      const expected = findLossy(value)
      expect(expected).toBeDefined()
      expect(freezeLossless(value)).toEqual(expected)
    }
  })

  it('leaves the root of a refused value unfrozen', () => {
    const value = { ok: { n: 1 }, bad: () => 1 }
    expect(freezeLossless(value)).toMatchObject({ path: '/bad' })
    expect(Object.isFrozen(value)).toBe(false)
  })
})

import { describe, expect, it } from 'vitest'
import { clip, splitLines } from './text.js'

describe('text helpers', () => {
  it('clips without splitting a surrogate pair', () => {
    expect(clip('ab😀cd', 3)).toBe('ab…')
    expect(clip('ab😀cd', 4)).toBe('ab😀…')
    expect(clip('short', 10)).toBe('short')
  })

  it('splits lines on \\n and \\r\\n, without a last empty line', () => {
    expect(splitLines('a\r\nb\nc\n')).toEqual(['a', 'b', 'c'])
    expect(splitLines('')).toEqual([])
  })
})

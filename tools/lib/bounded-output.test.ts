import { describe, expect, it } from 'vitest'
import { BoundedOutput } from './bounded-output.js'

describe('BoundedOutput', () => {
  it('keeps everything up to the limit', () => {
    const out = new BoundedOutput(10)
    out.push(Buffer.from('hello'))
    out.push(Buffer.from('world'))
    expect(out.truncated).toBe(false)
    expect(out.text()).toBe('helloworld')
  })

  it('keeps the first and the last half past the limit, across chunk boundaries, and counts the rest', () => {
    const out = new BoundedOutput(8)
    for (const chunk of ['abc', 'def', 'ghi', 'jkl', 'mn']) out.push(Buffer.from(chunk))
    expect(out.truncated).toBe(true)
    expect(out.text()).toBe('abcd\n[… 6 bytes omitted …]\nkl' + 'mn')
  })

  it('keeps a character whole when the head ends inside it and nothing was dropped', () => {
    const out = new BoundedOutput(8)
    out.push(Buffer.from('abc€de'))
    expect(out.truncated).toBe(false)
    expect(out.text()).toBe('abc€de')
  })

  it('shows no broken character where it cut the head and the tail', () => {
    const out = new BoundedOutput(8)
    out.push(Buffer.from('abc€€€€xyz€'))
    expect(out.truncated).toBe(true)
    expect(out.text()).not.toContain('\uFFFD')
    expect(out.text()).toMatch(/^abc\n\[… \d+ bytes omitted …\]\n.*€$/s)
  })
})

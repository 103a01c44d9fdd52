import { describe, expect, it } from 'vitest'
import { globMatcher, MAX_ALTERNATIVES } from './glob.js'

describe('globMatcher', () => {
  it('matches a glob without a slash against the file name at any depth', () => {
    const ts = globMatcher('*.ts')
    expect(ts('a.ts')).toBe(true)
    expect(ts('src/deep/b.ts')).toBe(true)
    expect(ts('src/b.tsx')).toBe(false)
  })

  it('keeps * and ? within one path part and lets ** span parts', () => {
    expect(globMatcher('src/*.ts')('src/a.ts')).toBe(true)
    expect(globMatcher('src/*.ts')('src/x/a.ts')).toBe(false)
    expect(globMatcher('src/**/*.ts')('src/a.ts')).toBe(true)
    expect(globMatcher('src/**/*.ts')('src/x/y/a.ts')).toBe(true)
    expect(globMatcher('src/?.ts')('src/ab.ts')).toBe(false)
  })

  it('supports {a,b} and [abc] / [!abc], and escapes regular-expression characters', () => {
    expect(globMatcher('*.{ts,md}')('x/readme.md')).toBe(true)
    expect(globMatcher('*.{ts,md}')('x/readme.txt')).toBe(false)
    expect(globMatcher('file[12].txt')('file2.txt')).toBe(true)
    expect(globMatcher('file[!12].txt')('file2.txt')).toBe(false)
    expect(globMatcher('a+b(1).txt')('a+b(1).txt')).toBe(true)
    expect(globMatcher('a.txt')('aXtxt')).toBe(false)
  })

  it('supports ranges, negation with ^, nested and unclosed braces, and ** spanning no folder at all', () => {
    expect(globMatcher('v[0-9].[a-c]')('v7.b')).toBe(true)
    expect(globMatcher('v[0-9].[a-c]')('v7.d')).toBe(false)
    expect(globMatcher('[^a]*')('b.ts')).toBe(true)
    expect(globMatcher('[^a]*')('a.ts')).toBe(false)
    expect(globMatcher('src/[!x]')('src//')).toBe(false)
    expect(globMatcher('{a,{b,c}x}.ts')('cx.ts')).toBe(true)
    expect(globMatcher('{a,{b,c}x}.ts')('c.ts')).toBe(false)
    expect(globMatcher('*.{ts,md')('x/a.md')).toBe(true)
    expect(globMatcher('**/a.ts')('a.ts')).toBe(true)
    expect(globMatcher('**/a.ts')('x/y/a.ts')).toBe(true)
    expect(globMatcher('src/**')('src/x/y.ts')).toBe(true)
    expect(globMatcher('x,y}.ts')('x,y}.ts')).toBe(true)
  })

  it('matches a glob that would make a backtracking RegExp explode in time linear in the path', () => {
    const name = `${'a'.repeat(200)}.txt`
    const stars = `${'*a'.repeat(30)}*b`
    const started = performance.now()
    expect(globMatcher(stars)(name)).toBe(false)
    expect(globMatcher(`${'**/'.repeat(30)}b`)(`${'a/'.repeat(100)}c`)).toBe(false)
    expect(globMatcher(`${'*a'.repeat(30)}*`)(name)).toBe(true)
    // A RegExp translation takes minutes here; the simulation takes well under a millisecond.
    expect(performance.now() - started).toBeLessThan(500)
  })

  it('refuses braces that spell too many alternatives, and over-long globs', () => {
    expect(() => globMatcher('{a,b}'.repeat(9))).toThrow(`more than ${MAX_ALTERNATIVES} alternatives`)
    expect(() => globMatcher('a'.repeat(2000))).toThrow('longer than')
  })
})

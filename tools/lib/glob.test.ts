import { describe, expect, it } from 'vitest'
import { globMatcher } from './glob.js'

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
})

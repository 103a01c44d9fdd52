import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { describeIssues, validators } from './validation.js'

describe('validators', () => {
  it('validates draft-07 and 2020-12 schemas and names the failing paths', () => {
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }
    const draft2020 = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { tags: { type: 'array', prefixItems: [{ type: 'string' }] } } }
    expect(validators.forSchema(draft7)({ id: 'T-1' })).toEqual({ ok: true, value: { id: 'T-1' } })
    const missing = validators.forSchema(draft7)({})
    expect(missing.ok).toBe(false)
    expect(!missing.ok && describeIssues(missing.issues)).toBe('/id: is required')
    const wrong = validators.forSchema(draft2020)({ tags: [1] })
    expect(!wrong.ok && wrong.issues[0]?.path).toBe('/tags/0')
  })

  it('reports a missing required property at its own path, as zod does, escaped as a JSON pointer', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'string' }, 'x/y~z': { type: 'number' } }, required: ['b', 'x/y~z'] } },
      required: ['a'],
    }
    const top = validators.forSchema(schema)({})
    expect(!top.ok && top.issues).toEqual([{ path: '/a', message: 'is required' }])
    const nested = validators.forSchema(schema)({ a: {} })
    expect(!nested.ok && describeIssues(nested.issues)).toBe('/a/b: is required; /a/x~1y~0z: is required')
    const zodMissing = validators.forSchema(z.object({ a: z.object({ b: z.string() }) }))({ a: {} })
    expect(!zodMissing.ok && zodMissing.issues[0]?.path).toBe('/a/b')
  })

  it('validates zod schemas by shape and returns the parsed value', () => {
    const schema = z.object({ n: z.number().default(3) })
    expect(validators.forSchema(schema)({})).toEqual({ ok: true, value: { n: 3 } })
    const bad = validators.forSchema(schema)({ n: 'x' })
    expect(!bad.ok && bad.issues[0]?.path).toBe('/n')
  })

  it('reuses one compiled validator for equal schemas', () => {
    const a = { type: 'object', properties: { q: { type: 'string', maxLength: 3 } } }
    const b = { properties: { q: { maxLength: 3, type: 'string' } }, type: 'object' }
    expect(validators.forSchema(a)).toBe(validators.forSchema(a))
    expect(validators.forSchema(a)({ q: 'long' }).ok).toBe(false)
    expect(validators.forSchema(b)({ q: 'long' }).ok).toBe(false)
  })

  it('drops regular expressions from an untrusted schema so a hostile pattern cannot stall the host', () => {
    const hostile = { type: 'object', properties: { pattern: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^(x+)+y$': { type: 'number' } } }
    const input = { pattern: `${'a'.repeat(40)}!` }
    const started = performance.now()
    const result = validators.forSchema(hostile, true)(input)
    // A backtracking regex on this input runs for minutes; 2 s only allows for a loaded machine.
    expect(performance.now() - started).toBeLessThan(2_000)
    // The property named "pattern" is still checked for its type; only the regex is gone.
    expect(result.ok).toBe(true)
    expect(validators.forSchema(hostile, true)({ pattern: 5 }).ok).toBe(false)
    // A trusted (authored) schema keeps its pattern.
    expect(validators.forSchema({ type: 'string', pattern: '^a+$' })('b').ok).toBe(false)
  })

  it('refuses an $async schema, trusted or not, instead of letting every value through', () => {
    const schema = { $async: true, type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }
    for (const untrusted of [true, false]) {
      const result = validators.forSchema({ ...schema }, untrusted)({ n: 'not a number' })
      expect(result.ok).toBe(false)
    }
    expect(describeIssues((validators.forSchema({ ...schema })({ n: 1 }) as { issues: { path: string; message: string }[] }).issues)).toContain('$async')
  })

  it('refuses an untrusted schema nested too deep to look through for patterns', () => {
    let schema: Record<string, unknown> = { type: 'string', pattern: '^(a+)+$' }
    for (let i = 0; i < 80; i++) schema = { type: 'object', properties: { a: schema } }
    const started = performance.now()
    const result = validators.forSchema(schema, true)({})
    expect(result).toMatchObject({ ok: false, issues: [{ message: expect.stringContaining('nested deeper than 64 levels') }] })
    // A backtracking regex on this input runs for minutes; 2 s only allows for a loaded machine.
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})

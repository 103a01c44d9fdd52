import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { CODE_MODE_RULES, declarationsFor } from './index.js'

/** Type-checks `declarations` followed by `program` (an async function body); returns the diagnostics. */
function check(declarations: string, program = ''): string[] {
  const text = `${declarations}\nexport async function program() {\n${program}\n}\n`
  const host = ts.createCompilerHost({})
  const original = host.getSourceFile
  host.getSourceFile = (name, version) => (name === 'program.ts' ? ts.createSourceFile(name, text, version) : original(name, version))
  const compiled = ts.createProgram(['program.ts'], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts'], types: [] }, host)
  return ts.getPreEmitDiagnostics(compiled).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}

describe('declarationsFor', () => {
  it('types arguments from the input schema, values from the output schema, and carries descriptions as JSDoc', () => {
    const text = declarationsFor([
      {
        name: 'lookup_ticket',
        description: 'Looks a ticket up by id.',
        inputSchema: {
          type: 'object',
          properties: { id: { type: 'integer', description: 'The ticket number.' }, tags: { type: 'array', items: { type: 'string' } } },
          required: ['id'],
        },
        outputSchema: { type: 'object', properties: { title: { type: 'string' }, state: { enum: ['open', 'closed'] } }, required: ['title', 'state'] },
      },
      { name: 'ping', inputSchema: { type: 'object' } },
    ])
    expect(text).toContain('/**\n   * Looks a ticket up by id.\n   */\n  lookup_ticket(args: {')
    expect(text).toContain('id: number;')
    expect(text).toContain('tags?: string[];')
    expect(text).toContain('state: "open" | "closed";')
    expect(text).toContain('ping(args: Record<string, unknown>): Promise<unknown>;')
    expect(check(text, 'const t = await tools.lookup_ticket({ id: 7 }); const s: "open" | "closed" = t.state; return t.title.length + s.length')).toEqual([])
    expect(check(text, 'await tools.lookup_ticket({ id: "7" })').join('\n')).toMatch(/not assignable to type 'number'/)
  })

  it('exposes a name that is not an identifier only through tools.call, printed as a string', () => {
    const text = declarationsFor([
      { name: 'weird-name', inputSchema: { type: 'object', properties: { 'a b': { type: 'string' } }, required: ['a b'] } },
      { name: 'call', inputSchema: { type: 'object' } },
    ])
    expect(text).toContain('call(name: "weird-name", args: {')
    expect(text).toContain('"a b": string;')
    expect(text).toContain('call(name: "call", args: Record<string, unknown>): Promise<unknown>;')
    expect(text).not.toMatch(/^\s+weird-name\(/m)
    expect(check(text, 'await tools.call("weird-name", { "a b": "x" }); await tools.call("anything", {})')).toEqual([])
  })

  it('keeps hostile names, descriptions and schema values inside their comment or string', () => {
    const text = declarationsFor([
      {
        name: 'x(): void; }; globalThis.pwned = 1; declare const y: {',
        description: 'nice */ } ; export const pwned = 1; /* and\r\nmore\u2028lines',
        inputSchema: {
          type: 'object',
          properties: {
            '"; } pwned': { const: '"; }; pwned(); "', description: '*/ pwned(); /*' },
          },
        },
      },
      { name: 'ok', description: '*/*/*/', inputSchema: { type: 'object' } },
    ])
    expect(text).not.toMatch(/^[^*"]*pwned/m)
    const opens = text.match(/\/\*\*/g)?.length ?? 0
    const closes = text.match(/\*\//g)?.length ?? 0
    expect(closes).toBe(opens)
    expect(check(text)).toEqual([])
    const lines = text.split('\n')
    expect(lines.filter((line) => line.includes('export const pwned'))).toEqual([expect.stringMatching(/^\s+\* /)])
  })

  it('says unknown where a schema says nothing it can type, and stops at depth', () => {
    let deep: Record<string, unknown> = { type: 'string' }
    for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { next: deep }, required: ['next'] }
    const text = declarationsFor([
      { name: 'a', inputSchema: { $ref: '#/$defs/x' } },
      { name: 'b', inputSchema: deep },
      { name: 'c', inputSchema: { type: 'object', properties: { n: { type: ['string', 'null'] }, u: { anyOf: [{ type: 'number' }, { type: 'boolean' }] } } } },
    ])
    expect(text).toContain('a(args: unknown): Promise<unknown>;')
    expect(text).toContain('next: unknown;')
    expect(text).toContain('n?: string | null;')
    expect(text).toContain('u?: number | boolean;')
    expect(check(text)).toEqual([])
  })

  it('states the language rules the sandbox enforces', () => {
    expect(CODE_MODE_RULES).toMatch(/body of an async function/)
    expect(CODE_MODE_RULES).toMatch(/tools\.call\("name", args\)/)
    expect(CODE_MODE_RULES).toMatch(/code.*message/)
  })
})

import { describe, expect, it } from 'vitest'
import { MAX_SCHEMA_CHARS, MAX_TOOLS, mapTools, matchesPattern, remoteName } from './schema-mapping.js'

const options = { serverId: 'srv' }
const tool = (name: string, extra: Record<string, unknown> = {}) => ({ name, inputSchema: { type: 'object' }, ...extra })

describe('mapTools', () => {
  it('maps name, description, input schema and source', () => {
    const { schemas, notes } = mapTools(
      [tool('lookup', { description: '  Find a thing.  ', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } })],
      options,
    )
    expect(notes).toEqual([])
    expect(schemas).toEqual([
      {
        type: 'function',
        function: {
          name: 'lookup',
          description: 'Find a thing.',
          parameters: { type: 'object', properties: { id: { type: 'string' } } },
        },
        source: 'mcp:srv',
      },
    ])
  })

  it('falls back to the title, then the name, when the description is empty', () => {
    const { schemas } = mapTools([tool('a', { description: '', title: 'Alpha' }), tool('b')], options)
    expect(schemas.map((schema) => schema.function.description)).toEqual([
      'Alpha (a tool from MCP server "srv")',
      'b (a tool from MCP server "srv")',
    ])
  })

  it('copies the MCP annotations it knows (booleans for hints, a short string for the title), and nothing else', () => {
    const { schemas } = mapTools(
      [
        tool('a', { annotations: { readOnlyHint: true, destructiveHint: 'yes', openWorldHint: true, idempotentHint: false, title: ' Alpha ', evil: 1 } }),
        tool('b', { annotations: {} }),
        tool('c', { annotations: { title: 'x'.repeat(500) } }),
      ],
      options,
    )
    expect(schemas[0]!.annotations).toEqual({ readOnlyHint: true, openWorldHint: true, idempotentHint: false, title: 'Alpha' })
    expect(schemas[1]!.annotations).toBeUndefined()
    expect(schemas[2]!.annotations?.title).toHaveLength(200)
  })

  it('lets a read-only hint make a tool concurrency-safe, unless the host declared which tools are', () => {
    const hinted = tool('read', { annotations: { readOnlyHint: true } })
    expect(mapTools([hinted, tool('other')], options).schemas.map((s) => s.concurrencySafe)).toEqual([true, undefined])
    expect(mapTools([hinted, tool('other')], { ...options, concurrencySafe: ['other'] }).schemas.map((s) => s.concurrencySafe)).toEqual([
      undefined,
      true,
    ])
    expect(mapTools([hinted], { ...options, concurrencySafe: false }).schemas[0]!.concurrencySafe).toBeUndefined()
    expect(mapTools([tool('other')], { ...options, concurrencySafe: true }).schemas[0]!.concurrencySafe).toBe(true)
  })

  it('drops tools with invalid names, with a note naming them', () => {
    const { schemas, notes } = mapTools([tool('ok_name-1'), tool('has space'), tool('x'.repeat(65)), { name: 7 }, 'nope'], options)
    expect(schemas.map((schema) => schema.function.name)).toEqual(['ok_name-1'])
    expect(notes).toEqual([
      'dropped tool "has space": invalid name (expected 1-64 of [a-zA-Z0-9_-])',
      `dropped tool "${'x'.repeat(65)}": invalid name (expected 1-64 of [a-zA-Z0-9_-])`,
      'dropped tool #3: invalid name (expected 1-64 of [a-zA-Z0-9_-])',
      'dropped tool #4: not an object',
    ])
  })

  it('drops duplicate names after the first', () => {
    const { schemas, notes } = mapTools([tool('a', { description: 'first' }), tool('a', { description: 'second' })], options)
    expect(schemas.map((schema) => schema.function.description)).toEqual(['first'])
    expect(notes).toEqual(['dropped tool "a": duplicate name'])
  })

  it('drops input schemas that are not objects, describe non-objects, or are too large or deep', () => {
    let deep: Record<string, unknown> = { type: 'string' }
    for (let level = 0; level < 40; level++) deep = { type: 'object', properties: { next: deep } }
    const { schemas, notes } = mapTools(
      [
        tool('arr', { inputSchema: [] }),
        tool('str', { inputSchema: { type: 'string' } }),
        tool('big', { inputSchema: { type: 'object', description: 'x'.repeat(MAX_SCHEMA_CHARS) } }),
        tool('deep', { inputSchema: deep }),
      ],
      options,
    )
    expect(schemas).toEqual([])
    expect(notes).toEqual([
      'dropped tool "arr": inputSchema is not an object',
      'dropped tool "str": inputSchema must describe an object',
      `dropped tool "big": inputSchema is larger than ${MAX_SCHEMA_CHARS} characters`,
      'dropped tool "deep": inputSchema is nested deeper than 32 levels',
    ])
  })

  it('defaults a missing input schema or type to an object, on a copy', () => {
    const original = { properties: { a: { type: 'number' } } }
    const { schemas } = mapTools([tool('none', { inputSchema: undefined }), tool('typeless', { inputSchema: original })], options)
    expect(schemas.map((schema) => schema.function.parameters)).toEqual([
      { type: 'object', properties: {} },
      { type: 'object', properties: { a: { type: 'number' } } },
    ])
    expect(original).not.toHaveProperty('type')
  })

  it('caps the description length and the number of tools', () => {
    const many = Array.from({ length: MAX_TOOLS + 5 }, (_, index) => tool(`t${index}`, { description: 'd'.repeat(10_000) }))
    const { schemas, notes } = mapTools(many, options)
    expect(schemas).toHaveLength(MAX_TOOLS)
    expect(schemas[0]!.function.description).toHaveLength(8_192)
    expect(notes).toEqual([`dropped 5 tools past the limit of ${MAX_TOOLS}`])
  })

  it('reports an answer that is not a list', () => {
    expect(mapTools({ tools: [] }, options)).toEqual({ schemas: [], notes: ['tools/list did not return an array of tools'] })
  })
})

describe('mounted-server options in the mapping', () => {
  const tools = [
    { name: 'read_file', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
    { name: 'write_file', inputSchema: { type: 'object' } },
    { name: 'list_dir', inputSchema: { type: 'object' } },
  ]

  it('prefixes names, and selects with include then exclude on the server names', () => {
    const { schemas } = mapTools(tools, { serverId: 's', prefix: 'fs', include: ['*_file', 'list_*'], exclude: ['write_*'] })
    expect(schemas.map((s) => s.function.name)).toEqual(['fs__read_file', 'fs__list_dir'])
    expect(remoteName('fs__read_file', 'fs')).toBe('read_file')
    expect(remoteName('read_file', 'fs')).toBeUndefined()
  })

  it('marks an untrusted read-only hint as not to be acted on, leaves approval as without it, and applies the host approval default', () => {
    const [read, write] = mapTools(tools, { serverId: 's' }).schemas
    expect(read).toMatchObject({ trustAnnotations: false, annotations: { readOnlyHint: true } })
    expect([read?.approval, write?.approval, write?.trustAnnotations]).toEqual([undefined, undefined, undefined])
    expect(mapTools(tools, { serverId: 's', trustAnnotations: true }).schemas[0]).not.toHaveProperty('trustAnnotations')
    expect(mapTools(tools, { serverId: 's', approval: 'never' }).schemas.map((s) => s.approval)).toEqual(['never', 'never', 'never'])
  })

  it('matches * as any run of characters', () => {
    expect(['a', 'ab', 'xab', 'axb'].filter((n) => matchesPattern(n, 'a*b'))).toEqual(['ab', 'axb'])
    expect(matchesPattern('get-sum', '*')).toBe(true)
    expect(matchesPattern('aba', 'ab*ba')).toBe(false)
  })
})

import { describe, expect, it } from 'vitest'
import { capabilitySeamToken, McpToolService, SeamIntegration } from 'seam-runtime'
import { beginTurn, rootWith } from '../../test/kit.js'
import { workspaceRoot } from '../../tools/lib/testing.js'
import { everythingTransport } from '../mcp/fixtures/test-helpers.js'
import { strictProblems } from './fixtures/wire-rules.js'
import type { ToolCapability } from '../seams/capabilities.js'
import { dropStrictNulls, toStrictSchema } from './strict-schema.js'

/** Each tool's strict schema (checked against the API's rules), or the reason it cannot be strict. */
function convertAll(tools: readonly ToolCapability[]): Record<string, string> {
  const verdicts: Record<string, string> = {}
  for (const tool of tools) {
    const converted = toStrictSchema(tool.parameters)
    if (!converted.ok) {
      verdicts[tool.name] = `not strict: ${converted.reason}`
      continue
    }
    expect(strictProblems(converted.schema, '$'), tool.name).toEqual([])
    verdicts[tool.name] = 'strict'
  }
  return verdicts
}

describe('toStrictSchema', () => {
  it('converts every tool in this repository to a schema strict mode accepts', async () => {
    const { root } = await workspaceRoot()
    const turn = await beginTurn(root)
    expect(convertAll(turn.capabilities.tools)).toEqual({
      list_files: 'strict',
      read_file: 'strict',
      run_command: 'strict',
      search_files: 'strict',
      write_file: 'strict',
    })
  })

  it("converts the reference MCP server's tools, or says for each why it cannot", async () => {
    const { root } = await rootWith(async (ctx) => {
      const service = new McpToolService({ id: 'everything', transport: everythingTransport() })
      await service.connect()
      ctx.effect(() => service.dispose(), 'mcp everything')
      const seams = new SeamIntegration()
      seams.registerToolService('global', service)
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const turn = await beginTurn(root)
    const verdicts = convertAll(turn.capabilities.tools)
    expect(Object.keys(verdicts).length).toBeGreaterThan(5)
    expect(verdicts).toMatchInlineSnapshot(`
      {
        "echo": "strict",
        "get-annotated-message": "strict",
        "get-env": "strict",
        "get-resource-links": "strict",
        "get-resource-reference": "strict",
        "get-structured-content": "strict",
        "get-sum": "strict",
        "get-tiny-image": "strict",
        "gzip-file-as-resource": "strict",
        "simulate-research-query": "strict",
        "toggle-simulated-logging": "strict",
        "toggle-subscriber-updates": "strict",
        "trigger-elicitation-request": "strict",
        "trigger-long-running-operation": "strict",
      }
    `)
  }, 20_000)

  it('makes optional properties nullable, everything required and objects closed, at every depth', () => {
    const converted = toStrictSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: 'Who.', 'x-order': 1, nullable: false },
        mode: { enum: ['a', 'b'], type: 'string', default: 'a' },
        filter: { type: 'object', properties: { tag: { type: 'string' } }, required: [] },
        items: { type: 'array', items: { $ref: '#/$defs/item' }, uniqueItems: true },
        either: { oneOf: [{ type: 'string' }, { type: 'number' }] },
      },
      required: ['name'],
      $defs: { item: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
    })
    expect(converted).toEqual({
      ok: true,
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'Who. (minLength: 1)' },
          mode: { enum: ['a', 'b', null], type: ['string', 'null'], description: '(default: "a")' },
          filter: {
            type: ['object', 'null'],
            properties: { tag: { type: ['string', 'null'] } },
            required: ['tag'],
            additionalProperties: false,
          },
          items: { type: ['array', 'null'], items: { $ref: '#/$defs/item' }, description: '(uniqueItems: true)' },
          either: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] },
        },
        required: ['name', 'mode', 'filter', 'items', 'either'],
        additionalProperties: false,
        $defs: { item: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } },
      },
    })
    expect(strictProblems((converted as { schema: unknown }).schema, '$')).toEqual([])
  })

  it.each([
    ['a free-form object', { type: 'object', properties: { meta: { type: 'object' } } }, '$.properties.meta: an object without declared `properties` (free-form) cannot be strict'],
    ['an open map', { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'string' } } } }, '$.properties.m: an object with open `additionalProperties` (a free-form map) cannot be strict'],
    ['a root that is not an object', { type: 'string' }, '$: the root must be a plain object schema'],
    ['`not`', { type: 'object', properties: { x: { not: { type: 'null' } } } }, '$.properties.x: `not` has no strict equivalent'],
    ['if/then/else', { type: 'object', properties: {}, additionalProperties: false, if: { required: ['a'] } }, '$: `if`/`then`/`else` has no strict equivalent'],
    ['a multi-member allOf', { type: 'object', properties: { x: { allOf: [{ type: 'string' }, { minLength: 2 }] } } }, '$.properties.x: `allOf` with several members has no strict equivalent'],
  ])('reports %s with its path instead of failing', (_what, schema, reason) => {
    expect(toStrictSchema(schema)).toEqual({ ok: false, reason })
  })

  it('drops only the nulls it introduced: optional properties whose schema refuses null', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: ['string', 'null'] },
        nested: { type: 'object', properties: { c: { type: 'number' } } },
        list: { type: 'array', items: { $ref: '#/$defs/row' } },
      },
      required: ['a'],
      $defs: { row: { type: 'object', properties: { d: { type: 'string' } } } },
    }
    expect(dropStrictNulls({ a: null, b: null, nested: { c: null }, list: [{ d: null }, { d: 'x' }] }, schema)).toEqual({
      a: null,
      b: null,
      nested: {},
      list: [{}, { d: 'x' }],
    })
  })

  it('drops the nulls it introduced inside anyOf, oneOf and single-member allOf branches and their array items', () => {
    const note = { type: 'object', properties: { kind: { const: 'note' }, text: { type: 'string' }, pinned: { type: 'boolean' } }, required: ['kind', 'text'] }
    const link = { type: 'object', properties: { kind: { const: 'link' }, url: { type: 'string' }, text: { type: 'string' } }, required: ['kind', 'url'] }
    const schema = {
      type: 'object',
      properties: {
        item: { anyOf: [note, link] },
        many: { type: 'array', items: { oneOf: [{ $ref: '#/$defs/note' }, link] } },
        wrapped: { allOf: [{ type: 'object', properties: { x: { type: 'number' }, keep: { type: ['string', 'null'] } } }] },
        either: { anyOf: [{ type: 'array', items: note }, { type: 'string' }] },
      },
      required: ['item', 'many', 'wrapped', 'either'],
      $defs: { note },
    }
    expect(toStrictSchema(schema).ok).toBe(true)
    const sent = {
      item: { kind: 'link', url: 'u', text: null },
      many: [{ kind: 'note', text: 't', pinned: null }, { kind: 'link', url: 'u', text: null }],
      wrapped: { x: null, keep: null },
      either: [{ kind: 'note', text: 't', pinned: null }],
    }
    expect(dropStrictNulls(sent, schema)).toEqual({
      item: { kind: 'link', url: 'u' },
      many: [{ kind: 'note', text: 't' }, { kind: 'link', url: 'u' }],
      wrapped: { keep: null },
      either: [{ kind: 'note', text: 't' }],
    })
  })
})

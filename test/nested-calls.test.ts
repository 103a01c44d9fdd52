import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import {
  defineTool,
  type JournalEvent,
  type JournalStore,
  memoryJournal,
  openTelemetry,
  type PluginContext,
  postgresJournal,
  sqliteJournal,
  transcript,
} from 'seam-runtime'
import { beginTurn, rootWith } from './kit.js'
import { memorySdk, parentOf } from './telemetry-kit.js'

const PG_URL = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: PG_URL, max: 2 })
afterAll(() => admin.end())

/**
 * `double` doubles; `sum_doubles` doubles each number through a nested call; `twice` calls
 * `sum_doubles` (two levels); `secret` is hidden; `recurse` calls itself until the bound stops it.
 */
function tools(ran: string[]) {
  return (ctx: PluginContext) => {
    ctx.addTool('double', defineTool({
      description: 'Double a number.',
      input: z.object({ n: z.number() }),
      approval: 'never',
      execute: ({ n }, c) => {
        ran.push(`double ${n}`)
        c.deferContext(`doubled ${n}`)
        return n * 2
      },
    }))
    ctx.addTool('sum_doubles', defineTool({
      description: 'Sum the doubles of numbers.',
      input: z.object({ ns: z.array(z.number()) }),
      approval: 'never',
      async execute({ ns }, c) {
        let total = 0
        for (const n of ns) {
          const outcome = await c.tools.call('double', { n })
          if (outcome.status !== 'completed') throw new Error(`double failed: ${outcome.code}`)
          total += outcome.value as number
        }
        return total
      },
    }))
    ctx.addTool('twice', defineTool({
      description: 'Sum doubles, through sum_doubles.',
      input: z.object({}),
      approval: 'never',
      async execute(_args, c) {
        const outcome = await c.tools.call('sum_doubles', '{"ns":[1,2]}')
        return outcome.value
      },
    }))
    ctx.addTool('secret', defineTool({ description: 'Hidden.', input: z.object({}), approval: 'never', hidden: true, execute: () => { ran.push('secret'); return 'leaked' } }))
    ctx.addTool('peek', defineTool({
      description: 'Try the hidden tool.',
      input: z.object({}),
      approval: 'never',
      async execute(_args, c) {
        const outcome = await c.tools.call('secret', {})
        return { status: outcome.status, code: outcome.code ?? null }
      },
    }))
    ctx.addTool('recurse', defineTool({
      description: 'Call itself.',
      input: z.object({ depth: z.number() }),
      approval: 'never',
      async execute({ depth }, c) {
        ran.push(`recurse ${depth}`)
        const outcome = await c.tools.call('recurse', { depth: depth + 1 })
        return { depth, inner: outcome.status === 'completed' ? outcome.value : outcome.code }
      },
    }))
  }
}

type CallEvent = Extract<JournalEvent, { kind: 'tool/call' }>
type ResultEvent = Extract<JournalEvent, { kind: 'tool/result' }>

/** Each `tool/call` as `callId<-parent`, and the results' call ids with their parents, in journal order. */
function lineage(events: readonly JournalEvent[]) {
  const calls = events.filter((e): e is CallEvent => e.kind === 'tool/call').map((e) => `${e.callId}<-${e.parent ?? ''}`)
  const results = events.filter((e): e is ResultEvent => e.kind === 'tool/result').map((e) => `${e.callId}<-${e.parent ?? ''}:${e.status}`)
  return { calls, results }
}

const stores: Record<string, () => JournalStore> = {
  memory: () => memoryJournal(),
  sqlite: () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-nested-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    return sqliteJournal(join(dir, 'journal.db'))
  },
  postgres: () => {
    const schema = `seam_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`
    onTestFinished(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    })
    return postgresJournal(PG_URL, { schema })
  },
}

describe('nested calls', () => {
  for (const [kind, open] of Object.entries(stores)) {
    it(`journals each nested call as its own pair linked to its outer call, two levels deep (${kind})`, async () => {
      const ran: string[] = []
      const journal = open()
      const { root } = await rootWith(tools(ran), { journal: journal as never })
      const turn = await beginTurn(root)
      const outcome = await turn.tools.execute({ callId: 'c1', name: 'twice', arguments: '{}' })
      expect(outcome).toMatchObject({ status: 'completed', value: 6 })
      expect(ran).toEqual(['double 1', 'double 2'])
      const events = await journal.read(turn.turnId)
      expect(lineage(events)).toEqual({
        calls: ['c1<-', 'c1/1<-c1', 'c1/1/1<-c1/1', 'c1/1/2<-c1/1'],
        results: ['c1/1/1<-c1/1:completed', 'c1/1/2<-c1/1:completed', 'c1/1<-c1:completed', 'c1<-:completed'],
      })
      // The model sees the outer call only.
      const messages = await transcript(journal, { turnId: turn.turnId })
      expect(messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.callId) : []))).toEqual(['c1'])
      expect(messages.filter((m) => m.role === 'tool').map((m) => (m as { result: { callId: string } }).result.callId)).toEqual(['c1'])
      await turn.end()
    })
  }

  it('delivers contexts a nested call deferred with the outer call, after it commits', async () => {
    const ran: string[] = []
    const { root } = await rootWith(tools(ran))
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'sum_doubles', arguments: '{"ns":[3]}' })
    expect(outcome.value).toBe(6)
    expect(outcome.contexts?.map((c) => c.content)).toEqual(['doubled 3'])
  })

  it('runs the hooks and guards of the pipeline for a nested call, with the outer token as its parent', async () => {
    const seen: { name: string; parent: symbol | undefined }[] = []
    let outerToken: symbol | undefined
    const { root } = await rootWith((ctx) => {
      tools([])(ctx)
      ctx.hooks.preExecute((exec, next) => {
        seen.push({ name: exec.name, parent: exec.parent })
        if (exec.name === 'sum_doubles') outerToken = exec.token
        return next()
      })
      ctx.guards.add((exec) => (exec.name === 'double' && (exec.arguments as { n: number }).n === 2 ? 'no doubling 2' : undefined))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'sum_doubles', arguments: '{"ns":[1,2]}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(outcome.content[0]).toMatchObject({ text: expect.stringContaining('double failed: DENIED') })
    expect(seen.map((s) => s.name)).toEqual(['sum_doubles', 'double', 'double'])
    expect(seen[0]!.parent).toBeUndefined()
    expect(seen[1]!.parent).toBe(outerToken)
  })

  it('refuses a nested call to a tool the turn cannot see: UNKNOWN_TOOL, nothing ran', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran))
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'peek', arguments: '{}' })
    expect(outcome.value).toEqual({ status: 'failed', code: 'UNKNOWN_TOOL' })
    expect(ran).toEqual([])
    expect(lineage(await journal.read(turn.turnId)).results).toContain('c1/1<-c1:failed')
  })

  it('bounds how deep nested calls go: past maxNesting the call settles NESTED_CALL_DEPTH and runs nothing', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran), { defaults: { maxNesting: 2 } })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'recurse', arguments: '{"depth":0}' })
    expect(outcome.value).toEqual({ depth: 0, inner: { depth: 1, inner: { depth: 2, inner: 'NESTED_CALL_DEPTH' } } })
    expect(ran).toEqual(['recurse 0', 'recurse 1', 'recurse 2'])
    const events = await journal.read(turn.turnId)
    const refused = events.find((e): e is ResultEvent => e.kind === 'tool/result' && e.callId === 'c1/1/1/1')
    expect(refused).toMatchObject({ status: 'failed', code: 'NESTED_CALL_DEPTH', parent: 'c1/1/1' })
  })

  it('makes a nested call\'s span a child of its outer call\'s span', async () => {
    const sdk = memorySdk()
    const telemetry = openTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider, host: 'test-host' })
    const { root } = await rootWith(tools([]), { telemetry })
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'twice', arguments: '{}' })
    await turn.end()
    const twice = sdk.span('execute_tool twice')
    const sum = sdk.span('execute_tool sum_doubles')
    const doubles = sdk.spans().filter((s) => s.name === 'execute_tool double')
    expect(parentOf(sum)).toBe(twice.spanContext().spanId)
    expect(doubles).toHaveLength(2)
    for (const span of doubles) expect(parentOf(span)).toBe(sum.spanContext().spanId)
    expect(sum.attributes['gen_ai.tool.call.id']).toBe('c1/1')
  })
})

import { defineTool } from 'seam-runtime'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { MAX_ARGUMENT_DEPTH } from '../src/runtime/pipeline/arguments.js'
import { beginTurn, expectPaired, rootWith } from './kit.js'

const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`

/** Failure 10 of issue 11: hostile argument shapes are refused as INVALID_ARGS with a clear limit. */
describe('hostile arguments', () => {
  const tools = (ctx: Parameters<Parameters<typeof rootWith>[0]>[0]) => {
    ctx.addTool('t', defineTool({ description: 'T.', input: z.object({ a: z.unknown() }).partial(), approval: 'never', isConcurrencySafe: () => true, execute: () => 'ran' }))
  }

  it.each([
    ['100,000 levels of JSON text', nested(100_000)],
    ['one level past the limit', `{"a":${nested(MAX_ARGUMENT_DEPTH)}}`],
  ])('refuses %s as INVALID_ARGS naming the depth limit, alone and in a batch', async (_label, text) => {
    const { root, journal } = await rootWith(tools)
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: text })
    expect(outcome).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
    expect(outcome.content[0]).toMatchObject({ text: expect.stringContaining(`more than ${MAX_ARGUMENT_DEPTH} levels deep`) })
    const [batched] = await turn.tools.executeBatch([{ callId: 'c2', name: 't', arguments: text }])
    expect(batched).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
    await expectPaired(journal, turn.turnId)
  })

  it('accepts arguments nested right up to the limit', async () => {
    const { root } = await rootWith(tools)
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: nested(MAX_ARGUMENT_DEPTH) })
    expect(outcome).toMatchObject({ status: 'completed', value: 'ran' })
  })

  it('refuses object arguments nested 100,000 levels, and ones whose getter throws', async () => {
    const { root, journal } = await rootWith(tools)
    const turn = await beginTurn(root)
    let deep: Record<string, unknown> = { a: 1 }
    for (let i = 0; i < 100_000; i++) deep = { a: deep }
    const hostile = Object.defineProperty({}, 'a', {
      enumerable: true,
      get() {
        throw new Error('gotcha')
      },
    })
    for (const [callId, args] of [
      ['c1', deep],
      ['c2', hostile],
    ] as const) {
      const outcome = await turn.tools.execute({ callId, name: 't', arguments: args })
      expect(outcome).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
      expect(outcome.details).not.toMatchObject({ internal: true })
    }
    await expectPaired(journal, turn.turnId)
  })
})

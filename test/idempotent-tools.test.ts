import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { capabilitySeamToken, createRoot, definePlugin, defineTool, type IdempotencyScope, type PluginContext, SeamIntegration, sqliteJournal } from 'seam-runtime'
import { beginTurn, expectPaired, rootWith, sleep } from './kit.js'

/** `charge` is keyed by its `order` argument; each body run is recorded and takes a little while. */
function tools(ran: string[], scope?: IdempotencyScope, fail = () => false) {
  return (ctx: PluginContext) => {
    ctx.addTool(
      'charge',
      defineTool({
        description: 'Charge an order once.',
        input: z.object({ order: z.string(), amount: z.number() }),
        output: z.object({ receipt: z.string() }),
        approval: 'never',
        isConcurrencySafe: () => true,
        idempotencyKey: ({ order }) => order,
        idempotencyScope: scope,
        async execute({ order }) {
          ran.push(order)
          await sleep(5)
          if (fail()) throw new Error('the card was declined')
          return { receipt: `r-${order}-${ran.length}` }
        },
      }),
    )
    ctx.addTool(
      'keyless',
      defineTool({ description: 'Key throws.', input: z.object({}), approval: 'never', idempotencyKey: () => { throw new Error('no key today') }, execute: () => { ran.push('keyless') } }),
    )
  }
}

const charge = (callId: string, order: string) => ({ callId, name: 'charge', arguments: JSON.stringify({ order, amount: 5 }) })

describe('idempotent tools', () => {
  it('replays the completed result of a key from the journal without running the body again', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran))
    const turn = await beginTurn(root)
    const first = await turn.tools.execute(charge('c1', 'o-1'))
    const second = await turn.tools.execute(charge('c2', 'o-1'))
    expect(first).toMatchObject({ status: 'completed', value: { receipt: 'r-o-1-1' } })
    expect(first.replayed).toBeUndefined()
    expect(second).toMatchObject({ status: 'completed', value: { receipt: 'r-o-1-1' }, content: first.content, replayed: true })
    expect(ran).toEqual(['o-1'])
    await expectPaired(journal, turn.turnId)
  })

  it.each([
    ['session', [1, 2, 3]],
    ['principal', [1, 1, 2]],
    ['global', [1, 1, 1]],
  ] as const)('holds a key within its %s scope', async (scope, receipts) => {
    const ran: string[] = []
    const { root } = await rootWith(tools(ran, scope))
    const values = []
    for (const [session, subjectId] of [['s1', 'ann'], ['s2', 'ann'], ['s3', 'bob']] as const) {
      const turn = await beginTurn(root, { session, principal: { subjectId, roles: [] } })
      values.push((await turn.tools.execute(charge('c1', 'o-1'))).value)
    }
    expect(values).toEqual(receipts.map((n) => ({ receipt: `r-o-1-${n}` })))
  })

  it('releases the key of a call that did not complete, so the next call with it runs', async () => {
    const ran: string[] = []
    let declined = true
    const { root } = await rootWith(tools(ran, 'session', () => declined))
    const turn = await beginTurn(root)
    expect(await turn.tools.execute(charge('c1', 'o-1'))).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    declined = false
    expect(await turn.tools.execute(charge('c2', 'o-1'))).toMatchObject({ status: 'completed', value: { receipt: 'r-o-1-2' } })
    expect(ran).toEqual(['o-1', 'o-1'])
  })

  it('fails a call whose key cannot be computed, without running it', async () => {
    const ran: string[] = []
    const { root } = await rootWith(tools(ran))
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'keyless', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(outcome.content[0]).toMatchObject({ text: expect.stringContaining('no key today') })
    expect(ran).toEqual([])
  })

  it("refuses an onUnknown other than 'fail' or 'rerun' when the tool is defined", () => {
    const spec = { description: 'x', input: z.object({}), idempotencyKey: () => 'k', execute: () => 1 }
    expect(() => defineTool({ ...spec, onUnknown: 'retry' as never })).toThrow(expect.objectContaining({ code: 'INVALID_TOOL' }))
    expect(defineTool({ ...spec, onUnknown: 'rerun' }).onUnknown).toBe('rerun')
  })

  it('runs 10 bodies for 100 concurrent calls with 10 keys, and gives every call its key’s result', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran))
    const turns = await Promise.all(Array.from({ length: 10 }, () => beginTurn(root)))
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, index) => turns[index % 10]!.tools.execute(charge(`c${index}`, `o-${index % 10}`))),
    )
    expect(ran.sort()).toEqual(Array.from({ length: 10 }, (_, index) => `o-${index}`).sort())
    for (const [index, outcome] of outcomes.entries()) {
      expect(outcome.status).toBe('completed')
      expect(outcome.value).toEqual(outcomes[index % 10]!.value)
    }
    expect(outcomes.filter((outcome) => outcome.replayed)).toHaveLength(90)
    for (const turn of turns) await expectPaired(journal, turn.turnId)
  })

  it('keys a ToolService tool by the argument names its schema lists', async () => {
    const ran: unknown[] = []
    const { root } = await rootWith((ctx) => {
      const seams = new SeamIntegration()
      seams.registerToolService('global', {
        id: 'payments',
        description: 'Payments.',
        schema: () => [
          {
            type: 'function',
            function: { name: 'refund', description: 'Refund.', parameters: { type: 'object', properties: { order: { type: 'string' }, note: { type: 'string' } } } },
            approval: 'never',
            idempotencyKey: ['order'],
          },
        ],
        execute: async (_scope, _name, input) => {
          ran.push(input)
          return { success: true, output: { refunded: ran.length } }
        },
      })
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const turn = await beginTurn(root)
    const call = (callId: string, args: object) => turn.tools.execute({ callId, name: 'refund', arguments: JSON.stringify(args) })
    expect(await call('c1', { order: 'o-1', note: 'a' })).toMatchObject({ value: { refunded: 1 } })
    expect(await call('c2', { order: 'o-1', note: 'b' })).toMatchObject({ value: { refunded: 1 }, replayed: true })
    expect(await call('c3', { order: 'o-2' })).toMatchObject({ value: { refunded: 2 } })
  })

  it('runs a key once across two hosts on one SQLite journal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-keys-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const ran: string[] = []
    const hosts = await Promise.all(
      ['host-a', 'host-b'].map(async (hostId) => {
        const root = await createRoot({ plugin: definePlugin({ name: 'root', setup: tools(ran) }), journal: sqliteJournal(join(dir, 'journal.db'), { hostId }) })
        onTestFinished(() => root.close())
        return beginTurn(root)
      }),
    )
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, index) => hosts[index % 2]!.tools.execute(charge(`c${index}`, 'o-1'))))
    expect(ran).toEqual(['o-1'])
    expect(new Set(outcomes.map((outcome) => JSON.stringify(outcome.value))).size).toBe(1)
  })
})

import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, type PluginContext, type ToolCallOutcome } from 'seam-runtime'
import { beginTurn, expectPaired, rootWith } from '../../../test/kit.js'

class Money {
  constructor(readonly cents: number) {}
}
const cyclic = (): unknown => {
  const a: Record<string, unknown> = { name: 'a' }
  a.self = a
  return a
}

describe('normalize: lossless values, output schemas, rendering, finalizeContent', () => {
  it.each([
    ['undefined', () => ({ a: undefined }), '/a'],
    ['NaN', () => ({ n: Number.NaN }), '/n'],
    ['-0', () => [1, -0], '/1'],
    ['BigInt', () => ({ big: 10n }), '/big'],
    ['a cycle', cyclic, '/self'],
    ['a class instance', () => ({ price: new Money(5) }), '/price'],
    ['a Date', () => ({ at: new Date(0) }), '/at'],
    ['Infinity', () => Number.POSITIVE_INFINITY, '/'],
    ['a Proxy', () => ({ p: new Proxy({}, { get: (_t, key) => (key === 'toJSON' ? () => 'SURPRISE' : undefined) }) }), '/p'],
  ])('rejects %s in a value as INVALID_OUTPUT naming the path', async (_what, make, at) => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('lossy', defineTool({ description: 'Lossy.', input: z.object({}), approval: 'never', execute: () => make() }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'lossy', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'INVALID_OUTPUT', details: { path: at } })
    expect(outcome.value).toBeUndefined()
    await expectPaired(journal, turn.turnId)
  })

  it('settles a value that throws when rendered as TOOL_ERROR, and journals that outcome with its content frozen', async () => {
    let reads = 0
    const { root, journal } = await rootWith((ctx) => {
      const value = {
        get n() {
          reads += 1
          if (reads > 1) throw new Error('read twice')
          return 1
        },
      }
      ctx.addTool('fickle', defineTool({ description: 'Fickle.', input: z.object({}), approval: 'never', execute: () => value }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'fickle', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR', content: [{ type: 'text', text: 'The call to "fickle" failed inside the runtime.' }] })
    await expectPaired(journal, turn.turnId)
    const result = (await journal.read(turn.turnId)).find((event) => event.kind === 'tool/result')
    expect(result?.kind === 'tool/result' && [Object.isFrozen(result.content), Object.isFrozen(result.content[0])]).toEqual([true, true])
  })

  it('gives a completed call an outcome and a tool/result with only the fields it has, and a failed one every field', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('echo', defineTool({ description: 'Echo.', input: z.object({ n: z.number() }), approval: 'never', execute: ({ n }) => ({ n }) }))
    })
    const turn = await beginTurn(root)
    const done = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"n":1}' })
    expect(Object.keys(done).sort()).toEqual(['callId', 'content', 'durationMs', 'generation', 'name', 'status', 'value'])
    const failed = await turn.tools.execute({ callId: 'c2', name: 'echo', arguments: '{"n":"x"}' })
    expect(failed).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
    expect(Object.keys(failed)).toEqual(expect.arrayContaining(['code', 'policy', 'reason', 'contexts', 'details']))
    const results = (await journal.read(turn.turnId)).filter((event) => event.kind === 'tool/result')
    expect(results.map((event) => ['code' in event, 'policy' in event])).toEqual([
      [false, false],
      [true, true],
    ])
  })

  it('validates the value against the output schema', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('ticket', defineTool({ description: 'T.', input: z.object({ ok: z.boolean() }), output: z.object({ title: z.string() }), approval: 'never', execute: ({ ok }) => (ok ? { title: 'Printer' } : { title: 42 }) as { title: string } }))
    })
    const turn = await beginTurn(root)
    expect((await turn.tools.execute({ callId: 'c1', name: 'ticket', arguments: '{"ok":true}' })).value).toEqual({ title: 'Printer' })
    const bad = await turn.tools.execute({ callId: 'c2', name: 'ticket', arguments: '{"ok":false}' })
    expect(bad).toMatchObject({ code: 'INVALID_OUTPUT', details: { fields: ['/title'] } })
  })

  it('renders with render(args, value), else as JSON text, and freezes the value', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('pretty', defineTool({ description: 'P.', input: z.object({ id: z.string() }), approval: 'never', render: (args, value: { title: string }) => `${args.id}: ${value.title}`, execute: () => ({ title: 'Printer' }) }))
      ctx.addTool('plain', defineTool({ description: 'J.', input: z.object({}), approval: 'never', execute: () => ({ list: [1, 2] }) }))
    })
    const turn = await beginTurn(root)
    const pretty = await turn.tools.execute({ callId: 'c1', name: 'pretty', arguments: '{"id":"T-1"}' })
    expect(pretty.content).toEqual([{ type: 'text', text: 'T-1: Printer' }])
    const plain = await turn.tools.execute({ callId: 'c2', name: 'plain', arguments: '{}' })
    expect(plain.content).toEqual([{ type: 'text', text: '{"list":[1,2]}' }])
    expect(Object.isFrozen((plain.value as { list: number[] }).list)).toBe(true)
  })

  it('runs finalizeContent exactly once for every kind of outcome, content only', async () => {
    const finalized: string[] = []
    let mode = 'ok'
    const setup = (ctx: PluginContext) => {
      ctx.addTool('final', defineTool({
        description: 'F.',
        input: z.object({ n: z.number() }),
        approval: 'never',
        finalizeContent: (content, info) => {
          finalized.push(`${info.callId}:${info.status}:${info.code ?? ''}`)
          return [...content, { type: 'text', text: '(checked)' }]
        },
        execute: () => {
          if (mode === 'throw') throw new Error('no')
          return { n: 1 }
        },
      }))
      ctx.hooks.preExecute((exec, next) => (exec.callId === 'deny' ? { kind: 'deny', reason: 'no' } : next()))
    }
    const { root } = await rootWith(setup)
    const turn = await beginTurn(root)
    const outcomes: ToolCallOutcome[] = []
    outcomes.push(await turn.tools.execute({ callId: 'ok', name: 'final', arguments: '{"n":1}' }))
    outcomes.push(await turn.tools.execute({ callId: 'bad-args', name: 'final', arguments: '{"n":"x"}' }))
    outcomes.push(await turn.tools.execute({ callId: 'deny', name: 'final', arguments: '{"n":1}' }))
    mode = 'throw'
    outcomes.push(await turn.tools.execute({ callId: 'throw', name: 'final', arguments: '{"n":1}' }))
    expect(finalized).toEqual(['ok:completed:', 'bad-args:failed:INVALID_ARGS', 'deny:denied:DENIED', 'throw:failed:TOOL_ERROR'])
    for (const outcome of outcomes) expect(outcome.content.at(-1)).toEqual({ type: 'text', text: '(checked)' })
    expect(outcomes[0]!.value).toEqual({ n: 1 })
  })

  it('keeps the content when finalizeContent throws, and says so in the details', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({ description: 'T.', input: z.object({}), approval: 'never', finalizeContent: () => { throw new Error('finalizer bug') }, execute: () => 'fine' }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'fine' }], details: { finalizeError: 'finalizer bug' } })
  })
})

describe('post-execute and result observers', () => {
  const base = (ctx: PluginContext) => {
    ctx.addTool('t', defineTool({
      description: 'T.',
      input: z.object({}),
      approval: 'never',
      output: z.object({ secret: z.string() }),
      execute: (_a, ctx) => {
        ctx.deferContext('from the tool')
        return { secret: 's3cr3t' }
      },
    }))
  }

  it('replaces the content only, keeping the value', async () => {
    const { root } = await rootWith((ctx) => {
      base(ctx)
      ctx.hooks.postExecute(() => ({ kind: 'accept', content: [{ type: 'text', text: '[hidden]' }], contexts: ['from the policy'] }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'completed', value: { secret: 's3cr3t' }, content: [{ type: 'text', text: '[hidden]' }] })
    expect(outcome.contexts?.map((c) => c.content)).toEqual(['from the tool', 'from the policy'])
  })

  it('replaces the value, validating and re-rendering it', async () => {
    const { root } = await rootWith((ctx) => {
      base(ctx)
      ctx.hooks.postExecute((exec) => (exec.callId === 'bad' ? { kind: 'accept', value: { secret: 1 } } : { kind: 'accept', value: { secret: '***' } }))
    })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).toMatchObject({ value: { secret: '***' }, content: [{ type: 'text', text: '{"secret":"***"}' }] })
    expect((await turn.tools.execute({ callId: 'bad', name: 't', arguments: '{}' })).code).toBe('INVALID_OUTPUT')
  })

  it('refuses to replace both content and value in one decision (blocks instead)', async () => {
    const { root } = await rootWith((ctx) => {
      base(ctx)
      ctx.hooks.postExecute(() => ({ kind: 'accept', value: { secret: 'x' }, content: [{ type: 'text', text: 'y' }] }))
    })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).toMatchObject({ status: 'failed', code: 'POST_BLOCKED' })
  })

  it('a block drops the tool-deferred contexts and keeps only its own', async () => {
    const { root } = await rootWith((ctx) => {
      base(ctx)
      ctx.hooks.postExecute(() => ({ kind: 'block', feedback: 'leaks a secret', contexts: [{ role: 'system', content: 'tell the user it was withheld' }] }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome.contexts?.map((c) => c.content)).toEqual(['tell the user it was withheld'])
    expect(outcome.value).toBeUndefined()
  })

  it('contains observer failures and hands observers the frozen outcome', async () => {
    const seen: ToolCallOutcome[] = []
    const { root, journal } = await rootWith((ctx) => {
      base(ctx)
      ctx.hooks.result(() => { throw new Error('observer bug') })
      ctx.hooks.result((_exec, outcome) => { seen.push(outcome) })
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome.status).toBe('completed')
    expect(seen).toEqual([outcome])
    expect(Object.isFrozen(seen[0])).toBe(true)
    await expectPaired(journal, turn.turnId)
  })

  it('writes the durable tool/result after the live observers ran', async () => {
    const order: string[] = []
    const { root, journal } = await rootWith((ctx) => {
      base(ctx)
      ctx.hooks.result(() => {
        order.push('observer')
      })
    })
    // Wrapped before the turn begins: a turn takes its memory journal's writes as it finds them then.
    const append = journal.append.bind(journal)
    journal.append = async (event) => {
      if (event.kind !== 'turn/begin') order.push(event.kind)
      return append(event)
    }
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(order).toEqual(['tool/call', 'observer', 'tool/result'])
  })

  it('stamps tool/result at the time the outcome was made: tool/call\'s time plus the call\'s duration', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('slow', defineTool({ description: 'Slow.', input: z.object({}), approval: 'never', execute: () => new Promise((resolve) => setTimeout(() => resolve(1), 60)) }))
    })
    const turn = await beginTurn(root)
    const before = Date.now()
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    const after = Date.now()
    const events = await journal.read(turn.turnId)
    const call = events.find((e) => e.kind === 'tool/call')!
    const result = events.find((e) => e.kind === 'tool/result')!
    expect(outcome.durationMs).toBeGreaterThanOrEqual(55)
    // Whole milliseconds, each rounded: at most a millisecond off the duration either way.
    expect(Math.abs(result.at - call.at - outcome.durationMs)).toBeLessThanOrEqual(1)
    expect(result.at).toBeGreaterThanOrEqual(before - 1)
    expect(result.at).toBeLessThanOrEqual(after + 1)
  })
})

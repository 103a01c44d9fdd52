import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from 'seam-runtime'
import { beginTurn, deferred, expectPaired, journalKinds, rootWith, sleep } from './kit.js'
import { call, safe, summary, Timeline, work, workInput } from './batch-kit.js'

describe('executeBatch: order and overlap', () => {
  it('runs three safe calls at most two at a time and commits them A, B, C even when the third finishes before the second', async () => {
    const t = new Timeline()
    // B's body ends only once C's has: the order under test holds on a loaded machine too.
    const cEnded = deferred()
    const read = defineTool({
      description: 'Works until its turn comes.',
      input: workInput,
      approval: 'never',
      isConcurrencySafe: safe,
      execute: async ({ ms }, { callId, signal }) => {
        if (callId !== 'B') {
          await t.body(callId, ms, signal)
          if (callId === 'C') cEnded.resolve()
          return { done: callId }
        }
        t.begin(callId)
        try {
          await cEnded.promise
        } finally {
          t.finish(callId)
        }
        return { done: callId }
      },
    })
    const { root, journal } = await rootWith(
      (ctx) => {
        t.observe(ctx)
        ctx.addTool('read', read)
      },
      { journal: t.journal(), defaults: { maxParallel: 2 } },
    )
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([call('A', 'read', { ms: 20 }), call('B', 'read'), call('C', 'read', { ms: 1 })])

    expect(summary(outcomes)).toEqual(['A completed', 'B completed', 'C completed'])
    expect(outcomes.map((o) => o.value)).toEqual([{ done: 'A' }, { done: 'B' }, { done: 'C' }])
    expect(t.maxRunning).toBe(2)
    expect(t.overlapsOf('B')).toEqual(['A', 'C'])
    // The third body started and finished while the second was still running…
    t.expectBefore('end:C', 'end:B')
    // …yet every later stage follows model order.
    expect(t.of('pre')).toEqual(['A', 'B', 'C'])
    expect(t.of('post')).toEqual(['A', 'B', 'C'])
    expect(t.of('result')).toEqual(['A', 'B', 'C'])
    expect(t.of('tool/result')).toEqual(['A', 'B', 'C'])
    t.expectBefore('end:B', 'post:C')
    await expectPaired(journal, turn.turnId)
  })

  it('runs the seed example: read A and B overlap and commit A then B, update C runs alone after both, read D starts after C commits', async () => {
    const t = new Timeline()
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('read', work(t, { isConcurrencySafe: safe }))
        ctx.addTool('update', work(t))
      },
      { journal: t.journal() },
    )
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([
      call('A', 'read', { ms: 40 }),
      call('B', 'read', { ms: 10 }),
      call('C', 'update', { ms: 10 }),
      call('D', 'read', { ms: 5 }),
    ])

    expect(summary(outcomes)).toEqual(['A completed', 'B completed', 'C completed', 'D completed'])
    expect(t.overlapsOf('A')).toEqual(['B'])
    expect(t.overlapsOf('C')).toEqual([])
    expect(t.overlapsOf('D')).toEqual([])
    expect(await journalKinds(journal, turn.turnId)).toEqual([
      'turn/begin',
      'tool/call:A',
      'tool/call:B',
      'tool/result:A',
      'tool/result:B',
      'tool/call:C',
      'tool/result:C',
      'tool/call:D',
      'tool/result:D',
    ])
    t.expectBefore('tool/result:B', 'start:C')
    t.expectBefore('tool/result:C', 'start:D')
    const span = (id: string) => t.spans.get(id)!
    expect(span('B').end).toBeLessThan(span('A').end)
    expect(span('C').start).toBeGreaterThanOrEqual(span('A').end)
    expect(span('D').start).toBeGreaterThanOrEqual(span('C').end)
  })

  it('commits a value that throws when read as INVALID_OUTPUT, with its live and durable results, between its neighbours', async () => {
    const t = new Timeline()
    const { root, journal } = await rootWith(
      (ctx) => {
        t.observe(ctx)
        ctx.addTool('read', work(t, { isConcurrencySafe: safe }))
        ctx.addTool(
          'trap',
          defineTool({
            description: 'Returns a value whose getter throws.',
            input: z.object({}),
            approval: 'never',
            isConcurrencySafe: safe,
            execute: () => ({
              get secret(): string {
                throw new Error('do not read me')
              },
            }),
          }),
        )
      },
      { journal: t.journal() },
    )
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([call('A', 'read', { ms: 10 }), call('T', 'trap'), call('B', 'read', { ms: 1 })])

    expect(summary(outcomes)).toEqual(['A completed', 'T failed INVALID_OUTPUT', 'B completed'])
    expect((outcomes[1]!.content[0] as { text: string }).text).toContain('do not read me')
    expect(t.of('result')).toEqual(['A', 'T', 'B'])
    expect(t.of('tool/result')).toEqual(['A', 'T', 'B'])
    await expectPaired(journal, turn.turnId)
  })

  it('commits bodies that return at once (a value, a throw) in model order around a slower one, and a pool of two refills only as calls commit', async () => {
    const seen: string[] = []
    const slow = deferred()
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool(
          'now',
          defineTool({
            description: 'Answers in the step it starts.',
            input: z.object({ n: z.number() }),
            approval: 'never',
            isConcurrencySafe: safe,
            execute: ({ n }, { callId }) => {
              seen.push(`start:${callId}`)
              if (n < 0) throw new Error('negative')
              return { n }
            },
          }),
        )
        ctx.addTool(
          'later',
          defineTool({
            description: 'Answers once released.',
            input: z.object({}),
            approval: 'never',
            isConcurrencySafe: safe,
            execute: async (_args, { callId }) => {
              seen.push(`start:${callId}`)
              await slow.promise
              return { later: true }
            },
          }),
        )
      },
      { defaults: { maxParallel: 2 } },
    )
    const turn = await beginTurn(root)
    const batch = turn.tools.executeBatch([call('A', 'now', { n: 1 }), call('L', 'later'), call('B', 'now', { n: -1 }), call('C', 'now', { n: 3 })])
    await sleep(20)
    seen.push('released')
    slow.resolve()
    const outcomes = await batch

    expect(summary(outcomes)).toEqual(['A completed', 'L completed', 'B failed TOOL_ERROR', 'C completed'])
    expect(outcomes.map((o) => o.value)).toEqual([{ n: 1 }, { later: true }, undefined, { n: 3 }])
    // A committed at once, so L and B filled the pool; C waited for L (and the B behind it) to commit.
    expect(seen).toEqual(['start:A', 'start:L', 'start:B', 'released', 'start:C'])
    const results = (await journal.read(turn.turnId)).filter((e) => e.kind === 'tool/result').map((e) => (e as { callId: string }).callId)
    expect(results).toEqual(['A', 'L', 'B', 'C'])
    await expectPaired(journal, turn.turnId)
  })

  it('runs sixteen safe calls at once on one turn signal without piling a listener per call onto it', async () => {
    const t = new Timeline()
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    process.on('warning', onWarning)
    try {
      const { root } = await rootWith((ctx) => {
        ctx.addTool(
          'wait',
          defineTool({
            description: 'Watches its signal while it works.',
            input: workInput,
            approval: 'never',
            isConcurrencySafe: safe,
            execute: async ({ ms }, { callId, signal }) => {
              await t.body(callId, ms, signal)
              return callId
            },
          }),
        )
      })
      const turn = await beginTurn(root, { signal: new AbortController().signal, policy: { maxParallel: 16 } })
      const outcomes = await turn.tools.executeBatch(Array.from({ length: 16 }, (_, n) => call(`c${n}`, 'wait', { ms: 20 })))
      expect(outcomes.map((o) => o.value)).toEqual(Array.from({ length: 16 }, (_, n) => `c${n}`))
      expect(t.maxRunning).toBe(16)
      // Warnings are emitted on the next tick.
      await sleep(5)
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning')
  })

  it('keeps durable results in call order when a delayed first body is overtaken by a fast second one', async () => {
    const t = new Timeline()
    const { root, journal } = await rootWith(
      (ctx) => {
        t.observe(ctx)
        ctx.addTool('read', work(t, { isConcurrencySafe: safe }))
      },
      { journal: t.journal() },
    )
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([call('slow', 'read', { ms: 50 }), call('fast', 'read', { ms: 0 })])

    expect(summary(outcomes)).toEqual(['slow completed', 'fast completed'])
    t.expectBefore('end:fast', 'end:slow')
    expect(t.of('result')).toEqual(['slow', 'fast'])
    expect(t.of('tool/result')).toEqual(['slow', 'fast'])
    await expectPaired(journal, turn.turnId)
  })
})

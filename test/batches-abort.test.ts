import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type DeferredContext, defineTool } from 'seam-runtime'
import { beginTurn, deferred, expectPaired, journalKinds, rootWith, sleep } from './kit.js'
import { abortableSleep, call, safe, summary, Timeline, work } from './batch-kit.js'

describe('executeBatch: cancellation, approval and timeouts', () => {
  it.each(['turn', 'batch'] as const)(
    'on an abort of the %s signal while two of four safe calls run, the two drain and commit, the other two get ABORTED_BEFORE_DISPATCH pairs, and contexts arrive once after the batch',
    async (which) => {
      const t = new Timeline()
      const twoRunning = deferred()
      const delivered: DeferredContext[][] = []
      const { root, journal } = await rootWith(
        (ctx) => {
          t.observe(ctx)
          ctx.addTool(
            'wait',
            defineTool({
              description: 'Waits until cancelled; fails on its own when asked to.',
              input: z.object({ fail: z.boolean().default(false) }),
              approval: 'never',
              isConcurrencySafe: safe,
              execute: async ({ fail }, { callId, signal, deferContext }) => {
                deferContext(`context from ${callId}`)
                t.begin(callId)
                if (t.of('start').length === 2) twoRunning.resolve()
                try {
                  await abortableSleep(60_000, signal)
                } catch (reason) {
                  throw fail ? new Error('the disk went away') : reason
                } finally {
                  t.finish(callId)
                }
              },
            }),
          )
        },
        { journal: t.journal() },
      )
      const controller = new AbortController()
      const turn = await beginTurn(root, {
        policy: { maxParallel: 2 },
        signal: which === 'turn' ? controller.signal : undefined,
        onContexts: (contexts) => {
          t.mark('contexts')
          delivered.push([...contexts])
        },
      })
      const calls = [call('A', 'wait'), call('B', 'wait', { fail: true }), call('C', 'wait'), call('D', 'wait')]
      const pending = turn.tools.executeBatch(calls, which === 'batch' ? { signal: controller.signal } : {})
      await twoRunning.promise
      controller.abort(new Error('user pressed stop'))
      const outcomes = await pending

      expect(summary(outcomes)).toEqual([
        'A cancelled ABORTED',
        'B failed TOOL_ERROR',
        'C cancelled ABORTED_BEFORE_DISPATCH',
        'D cancelled ABORTED_BEFORE_DISPATCH',
      ])
      expect(t.of('start')).toEqual(['A', 'B'])
      expect(t.of('pre')).toEqual(['A', 'B'])
      expect(t.of('result')).toEqual(['A', 'B', 'C', 'D'])
      await expectPaired(journal, turn.turnId)
      expect(t.of('tool/call')).toEqual(['A', 'B', 'C', 'D'])
      expect(t.of('tool/result')).toEqual(['A', 'B', 'C', 'D'])
      expect(delivered.map((contexts) => contexts.map((c) => c.content))).toEqual([['context from A', 'context from B']])
      expect(t.log.at(-1)).toBe('contexts')
    },
  )

  it('runs nothing for a batch whose signal is already aborted, yet pairs every call with ABORTED_BEFORE_DISPATCH and a live result', async () => {
    const t = new Timeline()
    const { root, journal } = await rootWith(
      (ctx) => {
        t.observe(ctx)
        ctx.addTool('read', work(t, { isConcurrencySafe: safe }))
        ctx.addTool('update', work(t))
      },
      { journal: t.journal() },
    )
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([call('A', 'read'), call('B', 'update'), call('C', 'read')], { signal: AbortSignal.abort() })

    expect(summary(outcomes)).toEqual(['A cancelled ABORTED_BEFORE_DISPATCH', 'B cancelled ABORTED_BEFORE_DISPATCH', 'C cancelled ABORTED_BEFORE_DISPATCH'])
    expect(t.of('start')).toEqual([])
    expect(t.of('pre')).toEqual([])
    expect(t.of('result')).toEqual(['A', 'B', 'C'])
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:A', 'tool/result:A', 'tool/call:B', 'tool/result:B', 'tool/call:C', 'tool/result:C'])
  })

  it('asks for approvals in model order for a batch of safe calls that each ask, while the approved bodies overlap', async () => {
    const t = new Timeline()
    const answerAfter: Record<string, number> = { A: 30, B: 10, C: 0 }
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('send', work(t, { isConcurrencySafe: safe, approval: 'always' }))
      },
      {
        journal: t.journal(),
        approval: {
          request: async (request) => {
            t.mark(`prompt:${request.callId}`)
            await sleep(answerAfter[request.callId] ?? 0)
            return 'allowed-once'
          },
        },
      },
    )
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([call('A', 'send', { ms: 60 }), call('B', 'send', { ms: 30 }), call('C', 'send', { ms: 1 })])

    expect(summary(outcomes)).toEqual(['A completed', 'B completed', 'C completed'])
    expect(t.of('prompt')).toEqual(['A', 'B', 'C'])
    expect(t.of('approval/asked')).toEqual(['A', 'B', 'C'])
    expect(t.overlapsOf('A')).toContain('B')
    await expectPaired(journal, turn.turnId)
  })

  it('does not let a body that ignores its signal hang the batch: it settles TOOL_TIMEOUT after timeoutMs + graceMs', async () => {
    const t = new Timeline()
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('read', work(t, { isConcurrencySafe: safe }))
        ctx.addTool(
          'stubborn',
          defineTool({
            description: 'Ignores its signal.',
            input: z.object({}),
            approval: 'never',
            timeoutMs: 50,
            isConcurrencySafe: safe,
            execute: async () => {
              await sleep(600)
              return 'too late'
            },
          }),
        )
      },
      { journal: t.journal(), defaults: { graceMs: 50 } },
    )
    const turn = await beginTurn(root)
    const started = performance.now()
    const outcomes = await turn.tools.executeBatch([call('S', 'stubborn'), call('R', 'read', { ms: 1 })])
    const elapsed = performance.now() - started

    expect(summary(outcomes)).toEqual(['S failed TOOL_TIMEOUT', 'R completed'])
    expect(elapsed).toBeGreaterThanOrEqual(95)
    // Without the grace deadline the batch never settles; 2 s only allows for a loaded machine.
    expect(elapsed).toBeLessThan(2_000)
    expect(t.of('tool/result')).toEqual(['S', 'R'])
    await expectPaired(journal, turn.turnId)
  })
})

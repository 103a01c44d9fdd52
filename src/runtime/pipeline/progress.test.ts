import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { capabilitySeamToken, defineTool, type ProgressEvent, SeamIntegration, type ToolInvocationContext } from 'seam-runtime'
import { beginTurn, rootWith, sleep } from '../../../test/kit.js'
import { PROGRESS_INTERVAL_MS } from './progress.js'

const ticking = (options: { ticks: number; everyMs: number; timeoutMs?: number; maxTimeoutMs?: number }) =>
  defineTool({
    description: 'Counts slowly, reporting each tick.',
    input: z.object({}),
    approval: 'never',
    timeoutMs: options.timeoutMs,
    maxTimeoutMs: options.maxTimeoutMs,
    async execute(_args, ctx) {
      for (let done = 1; done <= options.ticks; done++) {
        await sleep(options.everyMs)
        ctx.signal.throwIfAborted()
        ctx.progress({ done, total: options.ticks, message: `tick ${done}` })
      }
      return options.ticks
    },
  })

describe('progress', () => {
  it('reaches root.on("progress") and the call’s onProgress, throttled, ending with the last report', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('count', ticking({ ticks: 20, everyMs: 10 }))
    })
    const heard: ProgressEvent[] = []
    const own: ProgressEvent[] = []
    root.on('progress', (event) => heard.push(event))
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'count', arguments: '{}' }, { onProgress: (event) => own.push(event) })
    expect(outcome).toMatchObject({ status: 'completed', value: 20 })
    expect(own).toEqual(heard)
    // 20 reports over ~200 ms: a few reach observers, the first and the last among them.
    expect(heard.length).toBeGreaterThanOrEqual(2)
    expect(heard.length).toBeLessThan(10)
    expect(heard[0]).toMatchObject({ callId: 'c1', name: 'count', turnId: turn.turnId, session: 'session-1', done: 1, total: 20, message: 'tick 1' })
    expect(heard.at(-1)).toMatchObject({ done: 20, total: 20, message: 'tick 20' })
    for (let i = 1; i < heard.length - 1; i++) expect(heard[i]!.at - heard[i - 1]!.at).toBeGreaterThanOrEqual(PROGRESS_INTERVAL_MS - 5)
    await turn.end()
  })

  it('delivers a report held back by the throttle before the outcome', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('burst', defineTool({
        description: 'Three reports at once.',
        input: z.object({}),
        approval: 'never',
        async execute(_args, ctx) {
          ctx.progress({ done: 1 })
          ctx.progress({ done: 2 })
          ctx.progress({ done: 3, message: 'almost' })
          await sleep(5)
          return 'ok'
        },
      }))
    })
    const order: string[] = []
    const turn = await beginTurn(root)
    const outcome = turn.tools.execute({ callId: 'c1', name: 'burst', arguments: '{}' }, { onProgress: (e) => order.push(`progress ${e.done}`) })
    void outcome.then(() => order.push('outcome'))
    await outcome
    await sleep(0)
    expect(order).toEqual(['progress 1', 'progress 3', 'outcome'])
    await turn.end()
  })

  it('refuses a malformed report with INVALID_PROGRESS, which the body may catch', async () => {
    const errors: string[] = []
    const { root } = await rootWith((ctx) => {
      ctx.addTool('bad', defineTool({
        description: 'Bad reports.',
        input: z.object({}),
        approval: 'never',
        execute(_args, ctx) {
          for (const report of [{ done: -1 }, { done: Number.NaN }, { done: 1, total: 'x' }, { done: 1, message: 5 }, null, { done: 5 }, { done: 4 }]) {
            try {
              ctx.progress(report as never)
            } catch (error) {
              errors.push((error as { code: string }).code)
            }
          }
          return 'ok'
        },
      }))
    })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 'bad', arguments: '{}' })).toMatchObject({ status: 'completed' })
    // Five malformed, one accepted (5), one that goes down (4).
    expect(errors).toEqual(['INVALID_PROGRESS', 'INVALID_PROGRESS', 'INVALID_PROGRESS', 'INVALID_PROGRESS', 'INVALID_PROGRESS', 'INVALID_PROGRESS'])
    await turn.end()
  })

  it('extends the deadline on progress past timeoutMs, up to maxTimeoutMs', async () => {
    const { root } = await rootWith((ctx) => {
      // 10 ticks of 60 ms: 600 ms in all, each gap well inside the 250 ms deadline.
      ctx.addTool('extended', ticking({ ticks: 10, everyMs: 60, timeoutMs: 250, maxTimeoutMs: 5_000 }))
      // The same with a 400 ms cap: progress keeps it alive until 400 ms, not to its end.
      ctx.addTool('capped', ticking({ ticks: 10, everyMs: 60, timeoutMs: 250, maxTimeoutMs: 400 }))
      // Without maxTimeoutMs progress does not move the deadline.
      ctx.addTool('fixed', ticking({ ticks: 10, everyMs: 60, timeoutMs: 250 }))
    }, { defaults: { graceMs: 50 } })
    const turn = await beginTurn(root)
    const [extended, capped, fixed] = await Promise.all([
      turn.tools.execute({ callId: 'c1', name: 'extended', arguments: '{}' }),
      turn.tools.execute({ callId: 'c2', name: 'capped', arguments: '{}' }),
      turn.tools.execute({ callId: 'c3', name: 'fixed', arguments: '{}' }),
    ])
    expect(extended).toMatchObject({ status: 'completed', value: 10 })
    expect(extended.durationMs).toBeGreaterThan(550)
    expect(capped).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT' })
    expect(capped.durationMs).toBeGreaterThanOrEqual(390)
    expect(fixed).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT' })
    // Ordered by their deadlines (250 ms, 400 ms with progress, none), each stopped before its 600 ms of ticks: upper
    // bounds relative to each other, since a loaded machine's timers fire late for all three alike.
    expect(fixed.durationMs).toBeLessThan(capped.durationMs)
    expect(capped.durationMs).toBeLessThan(extended.durationMs)
    await turn.end()
  })

  it('reaches observers from a ToolService through its invocation context, and extends its deadline', async () => {
    const service = {
      id: 'svc',
      description: 'A slow provider.',
      schema: () => [{ type: 'function' as const, function: { name: 'crawl', description: 'Crawls.', parameters: { type: 'object' } }, approval: 'never' as const, timeoutMs: 300, maxTimeoutMs: 3_000 }],
      async execute(_scope: string, _name: string, _input: unknown, context?: ToolInvocationContext) {
        for (let done = 1; done <= 5; done++) {
          await sleep(100)
          context!.progress!({ done, total: 5 })
        }
        return { success: true as const, output: 'crawled' }
      },
    }
    const { root } = await rootWith((ctx) => {
      const integration = new SeamIntegration()
      integration.registerToolService('global', service)
      ctx.resources.provide(capabilitySeamToken, integration, () => integration.dispose())
    })
    const heard: number[] = []
    root.on('progress', (event) => heard.push(event.done))
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'crawl', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'completed', value: 'crawled' })
    expect(heard).toEqual([1, 2, 3, 4, 5])
    await turn.end()
  })

  it('rejects a maxTimeoutMs below timeoutMs when the tool is defined', () => {
    expect(() => defineTool({ description: 'x', input: z.object({}), timeoutMs: 500, maxTimeoutMs: 100, execute: () => 1 })).toThrow(/maxTimeoutMs/)
  })
})

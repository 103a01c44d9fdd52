import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { capabilitySeamToken, defineTool, SeamIntegration, type ToolInvocationContext } from 'seam-runtime'
import { beginTurn, expectPaired, rootWith, sleep } from '../../../test/kit.js'

describe('dispatch: wrappers, signals, timeouts', () => {
  it('settles a pre-aborted call as ABORTED_BEFORE_DISPATCH without running any hook', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({ description: 'T.', input: z.object({}), approval: 'never', execute: () => ran.push('body') }))
      ctx.hooks.preExecute((_e, next) => { ran.push('pre'); return next() })
      ctx.guards.add(() => { ran.push('guard'); return undefined })
      ctx.hooks.execute((_e, next) => { ran.push('wrap'); return next() })
    })
    const controller = new AbortController()
    controller.abort()
    const turn = await beginTurn(root, { signal: controller.signal })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH' })
    expect(ran).toEqual([])
    await expectPaired(journal, turn.turnId)
  })

  it('ranks an argument failure above a pre-dispatch abort', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({ description: 'T.', input: z.object({ n: z.number() }), approval: 'never', execute: () => 1 }))
    })
    const controller = new AbortController()
    controller.abort()
    const turn = await beginTurn(root, { signal: controller.signal })
    expect((await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{"n":"x"}' })).code).toBe('INVALID_ARGS')
  })

  it('settles an abort mid-body as ABORTED only after the body settles', async () => {
    let bodySettled = false
    const { root } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({
        description: 'T.',
        input: z.object({}),
        approval: 'never',
        execute: async (_a, { signal }) => {
          await new Promise((resolve) => signal.addEventListener('abort', resolve))
          await sleep(20)
          bodySettled = true
          return 'finished anyway'
        },
      }))
    })
    const controller = new AbortController()
    const turn = await beginTurn(root, { signal: controller.signal })
    setTimeout(() => controller.abort(), 5)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(bodySettled).toBe(true)
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(outcome.value).toBeUndefined()
  })

  it('cancels one call through its own signal while the turn keeps serving', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('wait', defineTool({
        description: 'Waits until cancelled.',
        input: z.object({}),
        approval: 'never',
        execute: (_a, { signal }) => new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      }))
      ctx.addTool('quick', defineTool({ description: 'Q.', input: z.object({}), approval: 'never', execute: () => 'done' }))
    })
    const turn = await beginTurn(root)
    const controller = new AbortController()
    const pending = turn.tools.execute({ callId: 'c1', name: 'wait', arguments: '{}' }, { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('this call only')), 5)
    expect(await pending).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(await turn.tools.execute({ callId: 'c2', name: 'quick', arguments: '{}' })).toMatchObject({ status: 'completed', value: 'done' })
  })

  it('adds no abort listener for a body that settles within its event-loop turn, and one, removed after, for a body that outlasts it', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('quick', defineTool({ description: 'Q.', input: z.object({}), approval: 'never', execute: async () => 'done' }))
      ctx.addTool('slow', defineTool({ description: 'S.', input: z.object({}), approval: 'never', execute: async () => { await sleep(15); return 'late' } }))
    })
    const turn = await beginTurn(root)
    const counted = () => {
      const signal = new AbortController().signal
      const counts = { added: 0, removed: 0 }
      const add = signal.addEventListener.bind(signal)
      const remove = signal.removeEventListener.bind(signal)
      signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => { counts.added += 1; add(...args) }
      signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => { counts.removed += 1; remove(...args) }
      return { signal, counts }
    }
    const fast = counted()
    expect(await turn.tools.execute({ callId: 'c1', name: 'quick', arguments: '{}' }, { signal: fast.signal })).toMatchObject({ status: 'completed' })
    expect(fast.counts).toEqual({ added: 0, removed: 0 })
    const slow = counted()
    expect(await turn.tools.execute({ callId: 'c2', name: 'slow', arguments: '{}' }, { signal: slow.signal })).toMatchObject({ status: 'completed', value: 'late' })
    expect(slow.counts).toEqual({ added: 1, removed: 1 })
  })

  it('tells a body of a caller abort that came before it first read its signal', async () => {
    const controller = new AbortController()
    const seen: boolean[] = []
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({
        description: 'T.',
        input: z.object({}),
        approval: 'never',
        execute: (_a, context) => {
          controller.abort(new Error('caller gave up'))
          seen.push(context.signal.aborted)
          return 'ignored'
        },
      }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' }, { signal: controller.signal })
    expect(seen).toEqual([true])
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    await expectPaired(journal, turn.turnId)
  })

  it('keeps a specific body failure over a cancellation', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({
        description: 'T.',
        input: z.object({}),
        approval: 'never',
        execute: async (_a, { signal }) => {
          await new Promise((resolve) => signal.addEventListener('abort', resolve))
          throw new Error('rollback failed')
        },
      }))
    })
    const controller = new AbortController()
    const turn = await beginTurn(root, { signal: controller.signal })
    setTimeout(() => controller.abort(), 5)
    expect(await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
  })

  it('settles a body that ignores its signal as TOOL_TIMEOUT after the grace period, and reports it abandoned', async () => {
    const abandoned: string[] = []
    let release!: () => void
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('stuck', defineTool({ description: 'Ignores signals.', input: z.object({}), approval: 'never', timeoutMs: 30, execute: () => new Promise<string>((resolve) => { release = () => resolve('late') }) }))
      },
      { defaults: { graceMs: 30 } },
    )
    root.on('abandoned', (call) => abandoned.push(call.callId))
    const turn = await beginTurn(root)
    const started = performance.now()
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'stuck', arguments: '{}' })
    const elapsed = performance.now() - started
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT', details: { abandoned: true } })
    expect(elapsed).toBeGreaterThanOrEqual(55)
    expect(abandoned).toEqual(['c1'])
    // The abandoned body keeps its generation leased until it really settles.
    const generation = root.activeGeneration
    await turn.end()
    await root.reload()
    expect(generation.state).toBe('retired')
    release()
    await generation.whenDisposed
    expect(generation.state).toBe('disposed')
  })

  it('aborts the body signal at the deadline and settles TOOL_TIMEOUT when the body stops', async () => {
    let reason: unknown
    const { root } = await rootWith((ctx) => {
      ctx.addTool('slow', defineTool({
        description: 'Slow.',
        input: z.object({}),
        approval: 'never',
        timeoutMs: 20,
        execute: (_a, { signal }) => new Promise((_r, reject) => signal.addEventListener('abort', () => { reason = signal.reason; reject(signal.reason) })),
      }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT' })
    expect((reason as Error).name).toBe('TimeoutError')
  })

  it('counts a body\'s deadline from the body\'s start when the call waited before it, else from the call\'s start', async () => {
    const { root } = await rootWith((ctx) => {
      const body = (ms: number) => defineTool({ description: 'Slow.', input: z.object({}), approval: 'never', timeoutMs: 100, execute: () => sleep(ms).then(() => 'done') })
      ctx.addTool('waits', body(60))
      ctx.addTool('late', body(150))
      ctx.hooks.preExecute(async (exec, next) => {
        if (exec.name === 'waits') await sleep(150)
        return next()
      })
    })
    const turn = await beginTurn(root)
    // 210 ms after the call began, 60 ms after its body did: within the body's 100 ms.
    expect(await turn.tools.execute({ callId: 'c1', name: 'waits', arguments: '{}' })).toMatchObject({ status: 'completed', value: 'done' })
    expect(await turn.tools.execute({ callId: 'c2', name: 'late', arguments: '{}' })).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT' })
  })

  it('lets a wrapper replace only the dispatch signal, and re-fuses the caller signal before the body', async () => {
    const seen: { wrapperAborted: boolean; callerAborted: boolean }[] = []
    const wrapperController = new AbortController()
    const callerController = new AbortController()
    const { root } = await rootWith((ctx) => {
      ctx.hooks.execute((exec, next) => {
        expect(Object.isFrozen(exec)).toBe(true)
        expect(() => { ;(exec as { name: string }).name = 'other' }).toThrow()
        return next(wrapperController.signal)
      })
      ctx.addTool('t', defineTool({
        description: 'T.',
        input: z.object({}),
        approval: 'never',
        execute: async (_a, { signal }) => {
          callerController.abort()
          seen.push({ wrapperAborted: wrapperController.signal.aborted, callerAborted: signal.aborted })
          return 'done'
        },
      }))
    })
    const turn = await beginTurn(root, { signal: callerController.signal })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(seen).toEqual([{ wrapperAborted: false, callerAborted: true }])
    expect(outcome.code).toBe('ABORTED')
  })

  it('aborts the body when a wrapper-substituted signal aborts', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.hooks.execute((_exec, next) => next(AbortSignal.timeout(10)))
      ctx.addTool('t', defineTool({
        description: 'T.',
        input: z.object({}),
        approval: 'never',
        execute: (_a, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('stopped by wrapper'))),
      }))
    })
    const turn = await beginTurn(root)
    expect((await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).value).toBe('stopped by wrapper')
  })

  it('turns a wrapper throw into one TOOL_ERROR and keeps the tool-deferred contexts', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.hooks.execute(async (_exec, next) => {
        await next()
        throw new Error('metrics backend down')
      })
      ctx.addTool('t', defineTool({ description: 'T.', input: z.object({}), approval: 'never', execute: (_a, ctx) => { ctx.deferContext('verify the report'); return 'ok' } }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR', contexts: [{ role: 'user', content: 'verify the report' }] })
    await expectPaired(journal, turn.turnId)
  })

  it('keeps deferred contexts from a body that throws and from a cancelled body', async () => {
    const controller = new AbortController()
    const { root } = await rootWith((ctx) => {
      ctx.addTool('throws', defineTool({ description: 'T.', input: z.object({}), approval: 'never', execute: (_a, ctx) => { ctx.deferContext({ role: 'system', content: 'cleanup needed' }); throw new Error('x') } }))
      ctx.addTool('cancelled', defineTool({
        description: 'C.',
        input: z.object({}),
        approval: 'never',
        execute: async (_a, ctx) => {
          ctx.deferContext('partial work exists')
          controller.abort()
          return 'ok'
        },
      }))
    })
    const turn = await beginTurn(root, { signal: controller.signal })
    expect((await turn.tools.execute({ callId: 'c1', name: 'throws', arguments: '{}' })).contexts).toMatchObject([{ role: 'system', content: 'cleanup needed' }])
    const cancelled = await turn.tools.execute({ callId: 'c2', name: 'cancelled', arguments: '{}' })
    expect(cancelled).toMatchObject({ code: 'ABORTED', contexts: [{ content: 'partial work exists' }] })
  })

  it('passes seam tools the turn context and maps { success: false } to TOOL_ERROR', async () => {
    const contexts: ToolInvocationContext[] = []
    const { root } = await rootWith((ctx) => {
      const seams = new SeamIntegration()
      seams.registerToolService('global', {
        id: 'remote',
        description: 'remote',
        schema: () => [{ type: 'function', function: { name: 'flaky', description: 'F.', parameters: { type: 'object' } }, approval: 'never' }],
        execute: async (scope, name, _input, context) => {
          contexts.push(context!)
          return { success: false, error: `${name} in ${scope}: upstream returned 503` }
        },
      })
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'flaky', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect((outcome.content[0] as { text: string }).text).toContain('flaky in root: upstream returned 503')
    expect(contexts[0]).toMatchObject({ callId: 'c1', turnId: turn.turnId, session: 'session-1', generation: 1, owner: 'root' })
    expect(contexts[0]!.signal).toBeInstanceOf(AbortSignal)
  })

  it('accepts a seam provider that answers synchronously, and settles one that throws synchronously as TOOL_ERROR', async () => {
    const { root, journal } = await rootWith((ctx) => {
      const seams = new SeamIntegration()
      const schema = (name: string) => ({ type: 'function' as const, function: { name, description: 'S.', parameters: { type: 'object' } }, approval: 'never' as const })
      seams.registerToolService('global', {
        id: 'plain-js',
        description: 'A provider without async functions.',
        schema: () => [schema('sync_ok'), schema('sync_throw')],
        execute: ((_scope: string, name: string) => {
          if (name === 'sync_throw') throw new Error('the backend is unreachable')
          return { success: true, output: { answered: 'synchronously' } }
        }) as never,
      })
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 'sync_ok', arguments: '{}' })).toMatchObject({ status: 'completed', value: { answered: 'synchronously' } })
    const thrown = await turn.tools.execute({ callId: 'c2', name: 'sync_throw', arguments: '{}' })
    expect(thrown).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect((thrown.content[0] as { text: string }).text).toContain('the backend is unreachable')
    await expectPaired(journal, turn.turnId)
  })

  it('hands wrappers and post-execute hooks the body\'s result as { ok, value } or { ok: false, error }, sync or async', async () => {
    const wrapped: unknown[] = []
    const posted: unknown[] = []
    const { root } = await rootWith((ctx) => {
      const input = z.object({ fail: z.boolean() })
      ctx.addTool('sync', defineTool({ description: 'S.', input, approval: 'never', execute: ({ fail }) => { if (fail) throw new Error('no'); return { n: 1 } } }))
      ctx.addTool('async', defineTool({ description: 'A.', input, approval: 'never', execute: async ({ fail }) => { if (fail) throw new Error('no'); return { n: 2 } } }))
      ctx.hooks.execute(async (_e, next) => { const result = await next(); wrapped.push(result); return result })
      ctx.hooks.postExecute((_e, result, next) => { posted.push(result); return next() })
    })
    const turn = await beginTurn(root)
    const outcomes = []
    for (const name of ['sync', 'async']) for (const fail of [false, true]) outcomes.push(await turn.tools.execute({ callId: `${name}-${fail}`, name, arguments: JSON.stringify({ fail }) }))
    expect(outcomes.map((o) => o.status)).toEqual(['completed', 'failed', 'completed', 'failed'])
    expect(outcomes.map((o) => o.value)).toEqual([{ n: 1 }, undefined, { n: 2 }, undefined])
    const failure = { ok: false, error: 'no' }
    expect(wrapped).toMatchObject([{ ok: true, value: { n: 1 } }, failure, { ok: true, value: { n: 2 } }, failure])
    expect(posted).toMatchObject([{ ok: true, value: { n: 1 } }, failure, { ok: true, value: { n: 2 } }, failure])
  })

  it('hands post-execute hooks the result of a body run without wrappers', async () => {
    const posted: unknown[] = []
    const { root } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({ description: 'T.', input: z.object({}), approval: 'never', execute: async () => ({ n: 3 }) }))
      ctx.hooks.postExecute((_e, result, next) => { posted.push(result); return next() })
    })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).toMatchObject({ status: 'completed', value: { n: 3 } })
    expect(posted).toEqual([{ ok: true, value: { n: 3 } }])
  })
})

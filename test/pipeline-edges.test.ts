import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { defineTool } from 'seam-runtime'
import { beginTurn, deferred, expectPaired, journalKinds, rootWith, sleep } from './kit.js'

/** Edge cases of the pipeline found in review: each fails open or breaks pairing without its fix. */
describe('pipeline edges', () => {
  it('refuses a late next() from a wrapper that already answered: the body never runs after its call settled', async () => {
    const ran: string[] = []
    let late: Promise<unknown> | undefined
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('delete_all', defineTool({ description: 'D.', input: z.object({}), approval: 'never', execute: () => ran.push('body') }))
      ctx.hooks.execute((_exec, next) => {
        setTimeout(() => {
          late = next().catch((error: Error) => error.message)
        }, 10)
        return { ok: true, value: 'cached' }
      })
    })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 'delete_all', arguments: '{}' })).toMatchObject({ status: 'completed', value: 'cached' })
    await sleep(40)
    expect(await late).toContain('called next() after its call had settled')
    expect(ran).toEqual([])
    await expectPaired(journal, turn.turnId)
  })

  it('checks content a post-execute hook puts on a failed call, and still journals exactly one result', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('boom', defineTool({ description: 'B.', input: z.object({}), approval: 'never', execute: () => { throw new Error('kaput') } }))
      ctx.hooks.postExecute(() => ({ kind: 'accept', content: [{ type: 'bogus', n: 1 }, 42] as never }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'boom', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(outcome.content).toEqual([{ type: 'text', text: expect.stringContaining('kaput') }])
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'tool/result:c1'])
  })

  it('keeps executeBatch resolving when a schema refinement throws while calls are classified', async () => {
    const { root, journal } = await rootWith((ctx) => {
      const input = z.object({ n: z.number() }).refine(() => {
        throw new Error('refine blew up')
      })
      ctx.addTool('t', defineTool({ description: 'T.', input, approval: 'never', isConcurrencySafe: () => true, execute: () => 1 }))
    })
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([
      { callId: 'b1', name: 't', arguments: '{"n":1}' },
      { callId: 'b2', name: 't', arguments: '{"n":2}' },
    ])
    expect(outcomes.map((o) => [o.callId, o.status, o.code])).toEqual([
      ['b1', 'failed', 'TOOL_ERROR'],
      ['b2', 'failed', 'TOOL_ERROR'],
    ])
    await expectPaired(journal, turn.turnId)
  })

  it('rejects executeBatch with a signal that is not an AbortSignal, as execute does', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({ description: 'T.', input: z.object({}), approval: 'never', execute: () => 1 }))
    })
    const turn = await beginTurn(root)
    const bad = { aborted: false } as unknown as AbortSignal
    await expect(turn.tools.executeBatch([{ callId: 'c1', name: 't', arguments: '{}' }], { signal: bad })).rejects.toMatchObject({ code: 'INVALID_CALL' })
    await expect(turn.tools.execute({ callId: 'c2', name: 't', arguments: '{}' }, { signal: bad })).rejects.toMatchObject({ code: 'INVALID_CALL' })
  })

  it('settles a call whose turn ended while it waited for approval as GENERATION_RETIRED, and runs nothing', async () => {
    const answer = deferred<'allowed-once'>()
    const ran: string[] = []
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('write', defineTool({ description: 'W.', input: z.object({}), approval: 'always', execute: () => ran.push('body') }))
      },
      { approval: { request: () => answer.promise } },
    )
    const turn = await beginTurn(root)
    const pending = turn.tools.execute({ callId: 'c1', name: 'write', arguments: '{}' })
    await sleep(10)
    await root.reload()
    await turn.end()
    answer.resolve('allowed-once')
    expect(await pending).toMatchObject({ status: 'failed', code: 'GENERATION_RETIRED' })
    expect(ran).toEqual([])
    await expectPaired(journal, turn.turnId)
  })

  it('keeps a generation alive for a body still running when its turn ends, and disposes it after', async () => {
    const release = deferred()
    const events: string[] = []
    const { root } = await rootWith((ctx) => {
      let disposed = false
      ctx.effect(() => {
        disposed = true
        events.push(`generation ${ctx.generation} disposed`)
      }, 'probe')
      ctx.addTool('slow', defineTool({
        description: 'S.',
        input: z.object({}),
        approval: 'never',
        execute: async () => {
          await release.promise
          events.push(`body finished; disposed=${disposed}`)
          return 'ok'
        },
      }))
    })
    const turn = await beginTurn(root)
    const pending = turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    await sleep(5)
    await root.reload()
    // end() waits for the body (turn/end comes after its tool/result); the lease is held meanwhile.
    const ending = turn.end()
    await sleep(20)
    expect(events).toEqual([])
    release.resolve()
    expect(await pending).toMatchObject({ status: 'completed', value: 'ok' })
    await ending
    await vi.waitFor(() => expect(events).toEqual(['body finished; disposed=false', 'generation 1 disposed']))
  })

  it('ranks a caller abort during a slow guard or pre-execute hook above the policy denial', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('g', defineTool({ description: 'G.', input: z.object({}), approval: 'never', execute: () => 1 }))
      ctx.addTool('h', defineTool({ description: 'H.', input: z.object({}), approval: 'never', execute: () => 1 }))
      ctx.guards.add(async (exec) => {
        if (exec.name !== 'g') return undefined
        await sleep(30)
        return 'not on Sundays'
      })
      ctx.hooks.preExecute(async (exec, next) => {
        if (exec.name !== 'h') return next()
        await sleep(30)
        return { kind: 'deny', reason: 'not on Sundays' }
      })
    })
    for (const name of ['g', 'h']) {
      const controller = new AbortController()
      const turn = await beginTurn(root, { signal: controller.signal })
      setTimeout(() => controller.abort(), 5)
      expect(await turn.tools.execute({ callId: 'c1', name, arguments: '{}' })).toMatchObject({ status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH' })
      await expectPaired(journal, turn.turnId)
    }
  })

  it('removes its abort listener from a batch signal once the batch\'s runs have ended', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('slow', defineTool({ description: 'S.', input: z.object({}), approval: 'never', isConcurrencySafe: () => true, execute: async () => { await sleep(10); return 'ok' } }))
    })
    const turn = await beginTurn(root)
    const signal = new AbortController().signal
    const counts = { added: 0, removed: 0 }
    const add = signal.addEventListener.bind(signal)
    const remove = signal.removeEventListener.bind(signal)
    signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      counts.added += 1
      add(...args)
    }
    signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      counts.removed += 1
      remove(...args)
    }
    const outcomes = await turn.tools.executeBatch(
      [1, 2, 3].map((n) => ({ callId: `c${n}`, name: 'slow', arguments: '{}' })),
      { signal },
    )
    expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed', 'completed'])
    // One listener shared by the three runs, gone with the last of them.
    expect(counts).toEqual({ added: 1, removed: 1 })
  })

  it('journals the approval question with secrets redacted by the same rule as the arguments', async () => {
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('login', defineTool({ description: 'L.', input: z.object({ user: z.string(), pwd: z.string(), auth: z.string() }), approval: 'always', execute: () => 'in' }))
      },
      { approval: { request: async () => 'rejected' } },
    )
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'login', arguments: '{"user":"bob","pwd":"hunter2","auth":"Basic Ym9i"}' })
    const asked = (await journal.read(turn.turnId)).find((event) => event.kind === 'approval/asked') as { summary: string }
    expect(asked.summary).toBe('login user="bob" pwd="[redacted]" auth="[redacted]"')
  })

  it('lets a second root open a memory journal another root is writing without closing that root\'s live call', async () => {
    const release = deferred()
    const { root: first, journal } = await rootWith((ctx) => {
      ctx.addTool('slow', defineTool({ description: 'S.', input: z.object({}), approval: 'never', execute: async () => { await release.promise; return 'done' } }))
    })
    const turn = await beginTurn(first)
    const pending = turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    await sleep(5)
    await rootWith(() => {}, { journal })
    release.resolve()
    expect(await pending).toMatchObject({ status: 'completed' })
    await turn.end()
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'tool/result:c1', 'turn/end'])
  })

  it('settles a call held by a hook, guard or wrapper that never answers as soon as its caller aborts, running nothing', async () => {
    const ran: string[] = []
    const never = new Promise<never>(() => {})
    const { root, journal } = await rootWith((ctx) => {
      for (const name of ['hooked', 'guarded', 'wrapped']) {
        ctx.addTool(name, defineTool({ description: 'T.', input: z.object({}), approval: 'never', execute: () => ran.push(name) }))
      }
      ctx.hooks.preExecute((exec, next) => (exec.name === 'hooked' ? never : next()))
      ctx.guards.add((exec) => (exec.name === 'guarded' ? never : undefined))
      ctx.hooks.execute((exec, next) => (exec.name === 'wrapped' ? never : next()))
    })
    for (const name of ['hooked', 'guarded', 'wrapped']) {
      const controller = new AbortController()
      const turn = await beginTurn(root)
      const pending = turn.tools.execute({ callId: 'c1', name, arguments: '{}' }, { signal: controller.signal })
      setTimeout(() => controller.abort(), 10)
      expect(await pending).toMatchObject({ status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH' })
      await expectPaired(journal, turn.turnId)
    }
    expect(ran).toEqual([])
  })

  it('settles a call whose post-execute hook never answers as ABORTED once its caller aborts, the value discarded', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('t', defineTool({ description: 'T.', input: z.object({}), approval: 'never', execute: () => 'secret result' }))
      ctx.hooks.postExecute(() => new Promise<never>(() => {}))
    })
    const controller = new AbortController()
    const turn = await beginTurn(root)
    const pending = turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 10)
    const outcome = await pending
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(outcome.value).toBeUndefined()
    await expectPaired(journal, turn.turnId)
  })

  it('starts no body in a batch once an observer aborted it, however the stages interleave', async () => {
    for (const passThroughHooks of [0, 1, 2]) {
      const ran: string[] = []
      const startedAfterAbort: string[] = []
      const controller = new AbortController()
      const { root } = await rootWith((ctx) => {
        ctx.addTool('work', defineTool({
          description: 'W.',
          input: z.object({ fail: z.boolean().default(false) }),
          approval: 'never',
          isConcurrencySafe: () => true,
          execute: ({ fail }, { callId, signal }) => {
            ran.push(callId)
            if (signal.aborted) startedAfterAbort.push(callId)
            if (fail) throw new Error('boom')
            return 1
          },
        }))
        for (let i = 0; i < passThroughHooks; i++) ctx.hooks.postExecute((_e, _r, next) => next())
        // Host policy: stop the batch at the first failure.
        ctx.hooks.result((_exec, outcome) => {
          if (outcome.status === 'failed') controller.abort()
        })
      })
      const turn = await beginTurn(root)
      const calls = ['A', 'B', 'C', 'D'].map((callId, i) => ({ callId, name: 'work', arguments: JSON.stringify({ fail: i === 0 }) }))
      const outcomes = await turn.tools.executeBatch(calls, { signal: controller.signal })
      // Every call whose body did not run says so; none ran after the abort was seen.
      for (const outcome of outcomes) {
        if (!ran.includes(outcome.callId)) expect(outcome.code).toBe('ABORTED_BEFORE_DISPATCH')
        else if (outcome.callId !== 'A') expect(outcome.code).toBe('ABORTED')
      }
      expect(startedAfterAbort).toEqual([])
      expect(ran.length).toBeLessThan(4)
    }
  })

  it('refuses root limits that would lift the batch bound or outlast a timer', async () => {
    for (const defaults of [{ maxParallel: Number.NaN }, { maxParallel: 1.5 }, { timeoutMs: 2 ** 31 }, { graceMs: 0 }]) {
      await expect(rootWith(() => {}, { defaults })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' })
    }
    // An option left undefined keeps its default.
    const { root } = await rootWith(() => {}, { defaults: { maxParallel: undefined } })
    expect(root.generation).toBe(1)
  })
})

import { defineTool, type JournalEvent, memoryJournal } from 'seam-runtime'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { beginTurn, deferred, expectPaired, journalKinds, rootWith, sleep, tappedJournal } from './kit.js'

const never = <T>() => new Promise<T>(() => {})
const quick = { policyTimeoutMs: 30, journalTimeoutMs: 30, graceMs: 20 }
const tool = (extra: Record<string, unknown> = {}) =>
  defineTool({ description: 'T.', input: z.object({}), approval: 'never', execute: () => 'ran', ...extra })

/** Failure 2 of issue 11: every stage that waits for host code has a deadline; no call can hang. */
describe('stage deadlines', () => {
  it('denies a call whose pre-execute hook never answers as POLICY_TIMEOUT, and runs nothing', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('t', tool({ execute: () => ran.push('body') }))
        ctx.hooks.preExecute(() => never())
      },
      { defaults: quick },
    )
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'POLICY_TIMEOUT', policy: 'hook', reason: 'a pre-execute hook did not answer within 30 ms' })
    expect(ran).toEqual([])
    await expectPaired(journal, turn.turnId)
  })

  it('denies a call whose guard never answers as POLICY_TIMEOUT', async () => {
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('t', tool())
        ctx.guards.add(() => never())
      },
      { defaults: quick },
    )
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).toMatchObject({ status: 'denied', code: 'POLICY_TIMEOUT', policy: 'guard' })
    await expectPaired(journal, turn.turnId)
  })

  it('settles a batch whose risk() never answers, journals the next call, and closes', async () => {
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('risky', tool({ approval: 'on-risk', risk: () => never() }))
        ctx.addTool('t', tool())
      },
      { defaults: quick },
    )
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([
      { callId: 'c1', name: 'risky', arguments: '{}' },
      { callId: 'c2', name: 't', arguments: '{}' },
    ])
    expect(outcomes.map((o) => [o.code ?? o.status, o.policy])).toEqual([
      ['POLICY_TIMEOUT', 'approval'],
      ['completed', undefined],
    ])
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'tool/result:c1', 'tool/call:c2', 'tool/result:c2'])
    await root.close()
  })

  it('uses a tool’s own policyTimeoutMs over the root default', async () => {
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('patient', tool({ policyTimeoutMs: 200 }))
        ctx.guards.add(() => sleep(60).then(() => undefined))
      },
      { defaults: quick },
    )
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 'patient', arguments: '{}' })).toMatchObject({ status: 'completed', value: 'ran' })
  })

  it('withholds the result of a body whose post-execute hook never answers', async () => {
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('t', tool({ execute: () => 'secret' }))
        ctx.hooks.postExecute(() => never())
      },
      { defaults: quick },
    )
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'POLICY_TIMEOUT' })
    expect(outcome.value).toBeUndefined()
    expect(JSON.stringify(outcome.content)).not.toContain('secret')
    await expectPaired(journal, turn.turnId)
  })

  it('begins a turn while the permission host hangs (the tool is hidden), and denies a call it stops answering for', async () => {
    let answers = 0
    const permissions = { check: () => (answers++ === 0 ? true : never<boolean>()) }
    const { root, journal } = await rootWith((ctx) => void ctx.addTool('admin', tool({ permissions: ['admin'] })), { defaults: quick, permissions })
    const turn = await beginTurn(root)
    expect(turn.capabilities.tools.map((t) => t.name)).toEqual(['admin'])
    expect(await turn.tools.execute({ callId: 'c1', name: 'admin', arguments: '{}' })).toMatchObject({ status: 'denied', code: 'POLICY_TIMEOUT', policy: 'permission' })
    await expectPaired(journal, turn.turnId)
    const hidden = await beginTurn(root)
    expect(hidden.capabilities.tools).toEqual([])
  })

  it('settles a wrapper that hangs after next() returned as TOOL_TIMEOUT within timeoutMs + graceMs, tracked as abandoned', async () => {
    const abandoned: string[] = []
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('t', tool({ timeoutMs: 30 }))
        ctx.hooks.execute(async (_exec, next) => {
          await next()
          return never()
        })
      },
      { defaults: quick },
    )
    root.on('abandoned', (call) => abandoned.push(call.callId))
    const turn = await beginTurn(root)
    const started = performance.now()
    const outcome = await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT', details: { abandoned: true, stage: 'execute-wrapper' } })
    // The wrapper never settles: any answer within a few seconds is the deadline's.
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(abandoned).toEqual(['c1'])
    await expectPaired(journal, turn.turnId)
  })

  it('settles a wrapper that hangs after next() once the caller aborts, within the grace period', async () => {
    const controller = new AbortController()
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('t', tool({ timeoutMs: 60_000 }))
        ctx.hooks.execute(async (_exec, next) => {
          await next()
          return never()
        })
      },
      { defaults: { graceMs: 20 } },
    )
    const turn = await beginTurn(root, { signal: controller.signal })
    const running = turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    await sleep(10)
    controller.abort()
    expect(await running).toMatchObject({ status: 'cancelled', code: 'ABORTED', details: { abandoned: true } })
  })

  it('lets the caller’s abort win at once over a hook that never answers', async () => {
    const controller = new AbortController()
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('t', tool())
        ctx.hooks.preExecute(() => never())
      },
      { defaults: { policyTimeoutMs: 60_000 } },
    )
    const turn = await beginTurn(root, { signal: controller.signal })
    const running = turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })
    await sleep(10)
    controller.abort()
    // Within one event-loop turn: settled before the next turn's first callback, however loaded the machine.
    const nextTurn = new Promise<'next turn'>((resolve) => setImmediate(() => resolve('next turn')))
    expect(await Promise.race([running.then(() => 'settled' as const), nextTurn])).toBe('settled')
    expect(await running).toMatchObject({ status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH' })
  })

  it('settles a call whose tool/call write stalls as JOURNAL_UNAVAILABLE, and pairs it when the write lands late', async () => {
    const inner = memoryJournal()
    const stall = deferred()
    const ran: string[] = []
    const journal = tappedJournal(inner, async (event: JournalEvent) => {
      if (event.kind === 'tool/call') await stall.promise
    })
    const { root } = await rootWith((ctx) => void ctx.addTool('t', tool({ execute: () => ran.push('body') })), { defaults: quick, journal })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).toMatchObject({ status: 'failed', code: 'JOURNAL_UNAVAILABLE' })
    expect(ran).toEqual([])
    stall.resolve()
    await sleep(5)
    expect(await journalKinds(inner, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'tool/result:c1'])
  })

  it('returns the outcome when the tool/result write stalls', async () => {
    const inner = memoryJournal()
    const journal = tappedJournal(inner, async (event: JournalEvent) => {
      if (event.kind === 'tool/result') await never()
    })
    const { root } = await rootWith((ctx) => void ctx.addTool('t', tool()), { defaults: quick, journal })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).toMatchObject({ status: 'completed' })
  })

  it('refuses a turn whose turn/begin write stalls, and ends and closes past a stalled turn/end', async () => {
    const inner = memoryJournal()
    let stall: JournalEvent['kind'] | undefined = 'turn/begin'
    const journal = tappedJournal(inner, async (event: JournalEvent) => {
      if (event.kind === stall) await never()
    })
    const { root } = await rootWith((ctx) => void ctx.addTool('t', tool()), { defaults: quick, journal })
    await expect(beginTurn(root)).rejects.toMatchObject({ code: 'JOURNAL_UNAVAILABLE' })
    stall = 'turn/end'
    const turn = await beginTurn(root)
    await turn.end()
    await root.close()
  })
})

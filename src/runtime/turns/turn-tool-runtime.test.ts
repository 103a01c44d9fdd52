import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, SeamIntegration, capabilitySeamToken, memoryJournal } from 'seam-runtime'
import { beginTurn, expectPaired, journalKinds, rootWith, sleep } from '../../../test/kit.js'
import type { MemoryJournal } from '../journal/memory.js'

/** The journal with its `append` replaced by a wrapper that calls it. */
function wrappedAppend(journal: MemoryJournal): MemoryJournal {
  const append = journal.append.bind(journal)
  journal.append = (event) => append(event)
  return journal
}

const echo = (calls: unknown[]) =>
  defineTool({
    description: 'Echo a message.',
    input: z.object({ message: z.string() }),
    approval: 'never',
    execute: (args) => {
      calls.push(args)
      return { echoed: args.message }
    },
  })

describe('TurnToolRuntime: the seed 000 test matrix', () => {
  it('allow → runs the body once → one success result', async () => {
    const calls: unknown[] = []
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('echo', echo(calls))
      ctx.hooks.preExecute(() => ({ kind: 'allow' }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"hi"}' })
    expect(outcome).toMatchObject({ status: 'completed', value: { echoed: 'hi' }, content: [{ type: 'text', text: '{"echoed":"hi"}' }] })
    expect(calls).toEqual([{ message: 'hi' }])
    expect(Object.isFrozen(outcome)).toBe(true)
    await turn.end()
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'tool/result:c1', 'turn/end'])
  })

  it('deny → runs the body zero times → one denial result', async () => {
    const calls: unknown[] = []
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('echo', echo(calls))
      ctx.hooks.preExecute(() => ({ kind: 'deny', reason: 'echo is disabled' }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"hi"}' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'DENIED', policy: 'hook', reason: 'echo is disabled' })
    expect(outcome.content[0]?.type === 'text' && outcome.content[0].text).toContain('echo is disabled')
    expect(calls).toEqual([])
    await expectPaired(journal, turn.turnId)
  })

  it('ask with no approval port → fails closed and runs the body zero times', async () => {
    const calls: unknown[] = []
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('echo', echo(calls))
      ctx.hooks.preExecute(() => ({ kind: 'ask', reason: 'echo talks to people' }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"hi"}' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'APPROVAL_UNAVAILABLE', policy: 'approval' })
    expect(calls).toEqual([])
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'approval/asked:c1', 'approval/decided:c1', 'tool/result:c1'])
  })

  it('a guard denial after a pre-execute allow and an approval → runs the body zero times', async () => {
    const calls: unknown[] = []
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('echo', echo(calls))
        ctx.hooks.preExecute(() => ({ kind: 'ask' }))
        ctx.guards.add((exec) => (exec.arguments.message === 'secret' ? 'secrets stay inside' : undefined))
      },
      { approval: { request: async () => 'allowed-once' } },
    )
    const turn = await beginTurn(root)
    const denied = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"secret"}' })
    expect(denied).toMatchObject({ status: 'denied', code: 'DENIED', policy: 'guard', reason: 'secrets stay inside' })
    const allowed = await turn.tools.execute({ callId: 'c2', name: 'echo', arguments: '{"message":"fine"}' })
    expect(allowed.status).toBe('completed')
    expect(calls).toEqual([{ message: 'fine' }])
  })

  it('a body that throws → one normalized error result', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('broken', defineTool({ description: 'Always fails.', input: z.object({}), approval: 'never', execute: () => { throw new Error('disk on fire') } }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'broken', arguments: '' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(outcome.value).toBeUndefined()
    expect((outcome.content[0] as { text: string }).text).toContain('disk on fire')
    await expectPaired(journal, turn.turnId)
  })

  it('a post-execute block → one valueless failure', async () => {
    const calls: unknown[] = []
    const { root } = await rootWith((ctx) => {
      ctx.addTool('echo', echo(calls))
      ctx.hooks.postExecute(() => ({ kind: 'block', feedback: 'contains personal data' }))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"hi"}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'POST_BLOCKED', reason: 'contains personal data' })
    expect('value' in outcome && outcome.value !== undefined).toBe(false)
    expect(calls).toHaveLength(1)
  })

  it('cancel → the owned work is stopped before the call settles', async () => {
    let stoppedAt = 0
    let settledAt = 0
    const { root } = await rootWith((ctx) => {
      ctx.addTool('wait', defineTool({
        description: 'Waits until cancelled.',
        input: z.object({}),
        approval: 'never',
        execute: (_args, { signal }) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener('abort', () => {
              stoppedAt = performance.now()
              reject(signal.reason)
            })
          }),
      }))
    })
    const controller = new AbortController()
    const turn = await beginTurn(root, { signal: controller.signal })
    const pending = turn.tools.execute({ callId: 'c1', name: 'wait', arguments: '{}' }).then((o) => {
      settledAt = performance.now()
      return o
    })
    setTimeout(() => controller.abort(new Error('user pressed stop')), 10)
    const outcome = await pending
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(stoppedAt).toBeGreaterThan(0)
    expect(stoppedAt).toBeLessThanOrEqual(settledAt)
  })
})

describe('TurnToolRuntime: lookup and arguments', () => {
  it('reports an unknown tool with the available names', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('echo', echo([]))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'nope', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'UNKNOWN_TOOL' })
    expect((outcome.content[0] as { text: string }).text).toContain('echo')
    await expectPaired(journal, turn.turnId)
  })

  it('lists at most 25 available names for an unknown tool and says how many more there are', async () => {
    const { root } = await rootWith((ctx) => {
      for (let i = 0; i < 30; i++) ctx.addTool(`tool_${String(i).padStart(2, '0')}`, echo([]))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'nope', arguments: '{}' })
    const text = (outcome.content[0] as { text: string }).text
    expect(text).toContain('Available tools: tool_00, tool_01,')
    expect(text).toContain('tool_24 and 5 more.')
    expect(text).not.toContain('tool_25')
  })

  it('treats a hidden tool as unknown', async () => {
    const calls: unknown[] = []
    const { root } = await rootWith((ctx) => {
      ctx.addTool('secret', defineTool({ description: 'Hidden.', input: z.object({}), hidden: true, approval: 'never', execute: () => calls.push(1) }))
    })
    const turn = await beginTurn(root)
    expect(turn.capabilities.tools).toEqual([])
    expect((await turn.tools.execute({ callId: 'c1', name: 'secret', arguments: '{}' })).code).toBe('UNKNOWN_TOOL')
    expect(calls).toEqual([])
  })

  it('rejects invalid JSON with a message a model can act on', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('echo', echo([]))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message": ' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
    expect((outcome.content[0] as { text: string }).text).toMatch(/not valid JSON/)
  })

  it('names the failing field paths of invalid arguments, for zod and seam JSON Schema tools', async () => {
    const seamCalls: unknown[] = []
    const { root } = await rootWith((ctx) => {
      ctx.addTool('echo', echo([]))
      const seams = new SeamIntegration()
      seams.registerToolService('global', {
        id: 'remote',
        description: 'remote',
        schema: () => [{ type: 'function', function: { name: 'lookup', description: 'Look up.', parameters: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { id: { type: 'string' }, limit: { type: 'integer', maximum: 10 } }, required: ['id'] } }, approval: 'never' }],
        execute: async (_s, _n, input) => {
          seamCalls.push(input)
          return { success: true, output: input }
        },
      })
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const turn = await beginTurn(root)
    const zodOutcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message": 5}' })
    expect(zodOutcome.code).toBe('INVALID_ARGS')
    expect(zodOutcome.details).toMatchObject({ fields: ['/message'] })
    const seamOutcome = await turn.tools.execute({ callId: 'c2', name: 'lookup', arguments: '{"limit": 50}' })
    expect(seamOutcome.code).toBe('INVALID_ARGS')
    const text = (seamOutcome.content[0] as { text: string }).text
    // A missing property is named at its own path, as zod names it.
    expect(text).toContain('/id: is required')
    expect(text).toContain('/limit')
    expect(seamOutcome.details).toMatchObject({ fields: ['/id', '/limit'] })
    expect(seamCalls).toEqual([])
    const ok = await turn.tools.execute({ callId: 'c3', name: 'lookup', arguments: { id: 'T-1' } })
    expect(ok).toMatchObject({ status: 'completed', value: { id: 'T-1' } })
  })

  it('hands the body deep-frozen arguments and an empty string as {}', async () => {
    const seen: unknown[] = []
    const { root } = await rootWith((ctx) => {
      ctx.addTool('inspect', defineTool({
        description: 'Inspect.',
        input: { type: 'object', properties: { nested: { type: 'object' } } },
        approval: 'never',
        execute: (args) => {
          seen.push(args, Object.isFrozen(args), Object.isFrozen((args as { nested?: object }).nested ?? Object.freeze({})))
          return 'ok'
        },
      }))
    })
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'inspect', arguments: '' })
    await turn.tools.execute({ callId: 'c2', name: 'inspect', arguments: '{"nested":{"a":1}}' })
    expect(seen).toEqual([{}, true, true, { nested: { a: 1 } }, true, true])
  })

  it('hands the body a copy of object arguments: the caller\'s object stays unfrozen and its later changes do not reach the body', async () => {
    const seen: unknown[] = []
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('inspect', defineTool({
        description: 'Inspect.',
        input: { type: 'object', properties: { nested: { type: 'object' } } },
        approval: 'never',
        execute: async (args) => {
          await sleep(5)
          seen.push(structuredClone(args), Object.isFrozen((args as { nested: object }).nested))
          return 'ok'
        },
      }))
    })
    const turn = await beginTurn(root)
    const args = { nested: { a: 1 } }
    const pending = turn.tools.execute({ callId: 'c1', name: 'inspect', arguments: args })
    args.nested.a = 2
    await pending
    expect(seen).toEqual([{ nested: { a: 1 } }, true])
    expect(Object.isFrozen(args) || Object.isFrozen(args.nested)).toBe(false)
    const call = (await journal.read(turn.turnId)).find((e) => e.kind === 'tool/call')
    expect(call).toMatchObject({ arguments: '{"nested":{"a":1}}' })
  })

  it('settles JOURNAL_UNAVAILABLE and never runs the body when tool/call cannot be written', async () => {
    const calls: unknown[] = []
    const journal = memoryJournal({ failWith: (event) => (event.kind === 'tool/call' ? new Error('disk full') : undefined) })
    const { root } = await rootWith((ctx) => {
      ctx.addTool('echo', echo(calls))
    }, { journal })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"hi"}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'JOURNAL_UNAVAILABLE' })
    expect(calls).toEqual([])
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin'])
  })

  it('throws only for caller misuse: a call without a callId, or with a blank one', async () => {
    const { root } = await rootWith(() => {})
    const turn = await beginTurn(root)
    for (const callId of ['', ' ', ' \t\n', '\u00a0', '\u3000 ']) {
      await expect(turn.tools.execute({ callId, name: 'x', arguments: '{}' }), JSON.stringify(callId)).rejects.toMatchObject({ code: 'INVALID_CALL' })
    }
    // An id with something visible in it is an id, spaces and all.
    expect(await turn.tools.execute({ callId: ' c1', name: 'x', arguments: '{}' })).toMatchObject({ callId: ' c1', code: 'UNKNOWN_TOOL' })
  })

  it('refuses calls after turn.end() with TURN_ENDED before anything is journaled, so the turn ends with turn/end', async () => {
    const calls: unknown[] = []
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('echo', echo(calls))
    })
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"early"}' })
    await turn.end()
    const late = { callId: 'c2', name: 'echo', arguments: '{"message":"late"}' }
    await expect(turn.tools.execute(late)).rejects.toMatchObject({ code: 'TURN_ENDED', hint: 'begin a new turn with root.beginTurn()' })
    await expect(turn.tools.executeBatch([late])).rejects.toMatchObject({ code: 'TURN_ENDED' })
    expect(calls).toEqual([{ message: 'early' }])
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'tool/result:c1', 'turn/end'])
  })
})

describe('TurnToolRuntime: one call id, one call', () => {
  const seqs = async (journal: Awaited<ReturnType<typeof rootWith>>['journal'], turnId: string) => (await journal.read(turnId)).map((e) => e.seq)

  // A memory journal claims call ids by its own uniqueness rule as it stores each `tool/call`, and
  // gives back the seq a refused one took; with its `append` wrapped, the turn claims them in a set.
  for (const [label, journalOf] of [
    ['a memory journal', () => memoryJournal()],
    ['a memory journal whose append is wrapped', () => wrappedAppend(memoryJournal())],
  ] as const) {
    describe(`with ${label}`, () => {
      /** A turn of a root with the `echo` tool on this journal, and the arguments its body ran with. */
      const echoTurn = async () => {
        const calls: unknown[] = []
        const { root, journal } = await rootWith((ctx) => void ctx.addTool('echo', echo(calls)), { journal: journalOf() })
        return { calls, journal, turn: await beginTurn(root) }
      }

      it('settles a reused call id as DUPLICATE_CALL: the body does not run again, nothing is journaled, the sequence has no gap', async () => {
        const { calls, journal, turn } = await echoTurn()
        const first = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"one"}' })
        const again = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"two"}' })
        const next = await turn.tools.execute({ callId: 'c2', name: 'echo', arguments: '{"message":"three"}' })
        await turn.end()
        expect(first.status).toBe('completed')
        expect(again).toMatchObject({ callId: 'c1', status: 'failed', code: 'DUPLICATE_CALL' })
        expect(again.content[0]?.type === 'text' && again.content[0].text).toContain('already has a call with id "c1"')
        expect(next.status).toBe('completed')
        expect(calls).toEqual([{ message: 'one' }, { message: 'three' }])
        expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'tool/result:c1', 'tool/call:c2', 'tool/result:c2', 'turn/end'])
        expect(await seqs(journal, turn.turnId)).toEqual([1, 2, 3, 4, 5, 6])
      })

      it('settles the same way in a batch: an id used earlier in the turn or earlier in the batch is DUPLICATE_CALL, in model order', async () => {
        const { calls, journal, turn } = await echoTurn()
        await turn.tools.execute({ callId: 'c0', name: 'echo', arguments: '{"message":"before"}' })
        const outcomes = await turn.tools.executeBatch([
          { callId: 'c0', name: 'echo', arguments: '{"message":"reused"}' },
          { callId: 'c1', name: 'echo', arguments: '{"message":"first"}' },
          { callId: 'c1', name: 'echo', arguments: '{"message":"repeated"}' },
        ])
        await turn.end()
        expect(outcomes.map((o) => [o.callId, o.code ?? o.status])).toEqual([
          ['c0', 'DUPLICATE_CALL'],
          ['c1', 'completed'],
          ['c1', 'DUPLICATE_CALL'],
        ])
        expect(calls).toEqual([{ message: 'before' }, { message: 'first' }])
        expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c0', 'tool/result:c0', 'tool/call:c1', 'tool/result:c1', 'turn/end'])
        expect(await seqs(journal, turn.turnId)).toEqual([1, 2, 3, 4, 5, 6])
      })
    })
  }

  it('lets a call id whose tool/call could not be written be used again', async () => {
    let failing = true
    const journal = memoryJournal({ failWith: (event) => (failing && event.kind === 'tool/call' ? new Error('disk full') : undefined) })
    const { root } = await rootWith((ctx) => {
      ctx.addTool('echo', echo([]))
    }, { journal })
    const turn = await beginTurn(root)
    const refused = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"hi"}' })
    failing = false
    const retried = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"hi"}' })
    await turn.end()
    expect([refused.code, retried.status]).toEqual(['JOURNAL_UNAVAILABLE', 'completed'])
  })
})

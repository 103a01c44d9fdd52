import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type DeferredContext, defineTool, memoryJournal, type PluginContext, type ToolCall, type ToolSpec } from 'seam-runtime'
import { beginTurn, deferred, expectPaired, journalKinds, rootWith, sleep } from './kit.js'

/**
 * One ordered log of everything a batch does: `pre:A`, `start:A`, `end:A`, `post:A`, `result:A`
 * (live observers), `tool/call:A` and `tool/result:A` (journal appends), plus which bodies overlapped.
 */
class Timeline {
  readonly log: string[] = []
  readonly spans = new Map<string, { start: number; end: number }>()
  readonly #running = new Set<string>()
  readonly #overlaps = new Map<string, Set<string>>()
  maxRunning = 0

  mark(label: string): void {
    this.log.push(label)
  }

  /** The ids logged under `kind`, in log order: `of('start')` → `['A', 'B']`. */
  of(kind: string): string[] {
    return this.log.filter((l) => l.startsWith(`${kind}:`)).map((l) => l.slice(kind.length + 1))
  }

  expectBefore(first: string, second: string): void {
    expect(this.log, `${first} before ${second}`).toContain(first)
    expect(this.log, `${first} before ${second}`).toContain(second)
    expect(this.log.indexOf(first), `${first} before ${second}`).toBeLessThan(this.log.indexOf(second))
  }

  /** The bodies that ran at some moment while `id`'s body ran. */
  overlapsOf(id: string): string[] {
    return [...(this.#overlaps.get(id) ?? [])].sort()
  }

  /** A body: logs its start and end, notes whoever runs alongside, waits `ms` unless aborted. */
  async body(id: string, ms: number, signal: AbortSignal): Promise<void> {
    this.begin(id)
    try {
      await abortableSleep(ms, signal)
    } finally {
      this.finish(id)
    }
  }

  begin(id: string): void {
    for (const other of this.#running) {
      this.#pair(id, other)
      this.#pair(other, id)
    }
    this.#running.add(id)
    this.maxRunning = Math.max(this.maxRunning, this.#running.size)
    this.spans.set(id, { start: performance.now(), end: Number.NaN })
    this.mark(`start:${id}`)
  }

  finish(id: string): void {
    this.#running.delete(id)
    this.spans.get(id)!.end = performance.now()
    this.mark(`end:${id}`)
  }

  /** Logs pre-execute, post-execute and live results from the plugin's hooks. */
  observe(ctx: PluginContext): void {
    ctx.hooks.preExecute((exec, next) => {
      this.mark(`pre:${exec.callId}`)
      return next()
    })
    ctx.hooks.postExecute((exec, _result, next) => {
      this.mark(`post:${exec.callId}`)
      return next()
    })
    ctx.hooks.result((exec) => this.mark(`result:${exec.callId}`))
  }

  /** A memory journal that logs each append as it is made (durable order). */
  journal() {
    return memoryJournal({
      failWith: (event) => {
        this.mark('callId' in event ? `${event.kind}:${event.callId}` : event.kind)
        return undefined
      },
    })
  }

  #pair(a: string, b: string): void {
    const set = this.#overlaps.get(a) ?? new Set<string>()
    this.#overlaps.set(a, set.add(b))
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

const workInput = z.object({ ms: z.number().int().min(0).default(0) })

/** A tool whose body works `ms` on the timeline; parallel only as `safe` says. */
function work(t: Timeline, spec: Partial<ToolSpec<typeof workInput>> = {}) {
  return defineTool({
    description: 'Works for a while.',
    input: workInput,
    approval: 'never',
    ...spec,
    execute: async ({ ms }, { callId, signal }) => {
      await t.body(callId, ms, signal)
      return { done: callId }
    },
  })
}

const safe = () => true

function call(callId: string, name: string, args: Record<string, unknown> = {}): ToolCall {
  return { callId, name, arguments: JSON.stringify(args) }
}

const summary = (outcomes: readonly { callId: string; status: string; code?: string }[]) =>
  outcomes.map((o) => (o.code ? `${o.callId} ${o.status} ${o.code}` : `${o.callId} ${o.status}`))

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

describe('executeBatch: classification', () => {
  /** [A safe 20 ms, X safe 80 ms, B]: B's tool turns unsafe when A's live result is observed. */
  async function reclassification(flip: boolean) {
    const t = new Timeline()
    let unsafe = false
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('read', work(t, { isConcurrencySafe: safe }))
        ctx.addTool('edit', work(t, { isConcurrencySafe: () => !unsafe }))
        ctx.hooks.result((exec) => {
          t.mark(`result:${exec.callId}`)
          if (flip && exec.callId === 'A') unsafe = true
        })
      },
      { journal: t.journal(), defaults: { maxParallel: 2 } },
    )
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([call('A', 'read', { ms: 20 }), call('X', 'read', { ms: 80 }), call('B', 'edit', { ms: 5 })])
    expect(summary(outcomes)).toEqual(['A completed', 'X completed', 'B completed'])
    expect(t.overlapsOf('A')).toEqual(['X'])
    return t
  }

  it('reclassifies a waiting call: when a commit makes its tool unsafe it waits for the pool to drain and runs alone', async () => {
    const t = await reclassification(true)
    // B waited for a slot, saw the flip when A's commit freed one, then waited for X to commit too.
    t.expectBefore('result:A', 'tool/call:B')
    t.expectBefore('tool/result:X', 'tool/call:B')
    expect(t.overlapsOf('B')).toEqual([])
    expect(t.of('tool/result')).toEqual(['A', 'X', 'B'])
  })

  it('control: without the flip, the same waiting call joins the pool as soon as a slot frees', async () => {
    const t = await reclassification(false)
    expect(t.overlapsOf('B')).toEqual(['X'])
    expect(t.of('tool/result')).toEqual(['A', 'X', 'B'])
  })

  it.each([
    ['throws', { isConcurrencySafe: () => { throw new Error('cannot tell') } }, { ms: 10 }],
    ["returns the truthy 'yes'", { isConcurrencySafe: () => 'yes' as unknown as boolean }, { ms: 10 }],
    ['returns the truthy 1', { isConcurrencySafe: () => 1 as unknown as boolean }, { ms: 10 }],
    ['would say true but the arguments are invalid', { isConcurrencySafe: safe }, { ms: 'soon' }],
    ['would say true but the arguments are not JSON', { isConcurrencySafe: safe }, '{"ms": 1'],
  ] as const)('treats a call whose classifier %s as exclusive: it overlaps neither neighbour', async (_case, spec, args) => {
    const t = new Timeline()
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('read', work(t, { isConcurrencySafe: safe }))
        ctx.addTool('odd', work(t, spec))
      },
      { journal: t.journal() },
    )
    const turn = await beginTurn(root)
    const odd: ToolCall = { callId: 'X', name: 'odd', arguments: typeof args === 'string' ? args : JSON.stringify(args) }
    const outcomes = await turn.tools.executeBatch([call('A', 'read', { ms: 30 }), odd, call('B', 'read', { ms: 30 })])

    expect(outcomes.map((o) => o.callId)).toEqual(['A', 'X', 'B'])
    expect(outcomes[0]!.status).toBe('completed')
    expect(outcomes[2]!.status).toBe('completed')
    expect(outcomes[1]!.code).toBe(typeof args === 'string' || typeof args.ms === 'string' ? 'INVALID_ARGS' : undefined)
    t.expectBefore('tool/result:A', 'tool/call:X')
    t.expectBefore('tool/result:X', 'tool/call:B')
    expect(t.overlapsOf('A')).toEqual([])
    expect(t.overlapsOf('B')).toEqual([])
    await expectPaired(journal, turn.turnId)
  })
})

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

describe('executeBatch: shared-state stress', () => {
  /** mulberry32: a small seeded PRNG, so a failing mix can be replayed. */
  function prng(seed: number): () => number {
    let a = seed >>> 0
    return () => {
      a = (a + 0x6d2b79f5) >>> 0
      let x = a
      x = Math.imul(x ^ (x >>> 15), x | 1)
      x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296
    }
  }

  it('runs 200 random batches of safe and exclusive calls with zero exclusive overlaps and zero lost or duplicated results', async () => {
    const random = prng(0x5eed)
    const running = { safe: 0, exclusive: 0 }
    let overlaps = 0
    let maxSafe = 0
    const runs = new Map<string, number>()
    const ticks = async (n: number) => {
      for (let i = 0; i < n; i += 1) await new Promise<void>((resolve) => setImmediate(resolve))
    }
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool(
        'shared',
        defineTool({
          description: 'Touches shared state; exclusive unless the call says it only reads.',
          input: z.object({ batch: z.number(), n: z.number(), safe: z.boolean(), ticks: z.number() }),
          approval: 'never',
          isConcurrencySafe: (args) => args.safe,
          execute: async (args, { callId }) => {
            const key = `${args.batch}/${callId}`
            runs.set(key, (runs.get(key) ?? 0) + 1)
            const kind = args.safe ? 'safe' : 'exclusive'
            if (running.exclusive > 0 || (!args.safe && running.safe > 0)) overlaps += 1
            running[kind] += 1
            maxSafe = Math.max(maxSafe, running.safe)
            try {
              await ticks(args.ticks)
            } finally {
              running[kind] -= 1
            }
            return { n: args.n }
          },
        }),
      )
    })

    const started = performance.now()
    let total = 0
    for (let batch = 0; batch < 200; batch += 1) {
      const turn = await beginTurn(root, { policy: { maxParallel: 1 + Math.floor(random() * 4) } })
      const size = 1 + Math.floor(random() * 8)
      const calls = Array.from({ length: size }, (_, n) =>
        call(`c${n}`, 'shared', { batch, n, safe: random() < 0.6, ticks: Math.floor(random() * 4) }),
      )
      const outcomes = await turn.tools.executeBatch(calls)
      total += size
      expect(outcomes.map((o) => [o.callId, o.status, o.value])).toEqual(calls.map((c, n) => [c.callId, 'completed', { n }]))
      const events = await journal.read(turn.turnId)
      const ids = (kind: string) => events.filter((e) => e.kind === kind).map((e) => (e as { callId: string }).callId)
      expect(ids('tool/result')).toEqual(calls.map((c) => c.callId))
      await expectPaired(journal, turn.turnId)
      await turn.end()
    }

    expect(overlaps).toBe(0)
    expect(runs.size).toBe(total)
    expect([...runs.values()].every((count) => count === 1)).toBe(true)
    // The mix really ran safe calls side by side, so zero overlaps is not a serial accident.
    expect(maxSafe).toBeGreaterThan(1)
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})

import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from 'seam-runtime'
import { beginTurn, expectPaired, rootWith } from './kit.js'
import { call } from './batch-kit.js'

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

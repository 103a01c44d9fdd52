import { describe, expect, it } from 'vitest'
import type { ToolCall } from 'seam-runtime'
import { beginTurn, expectPaired, rootWith } from './kit.js'
import { call, safe, summary, Timeline, work } from './batch-kit.js'

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

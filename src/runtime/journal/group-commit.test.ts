import { describe, expect, it } from 'vitest'
import { GroupCommit, PipelinedGroupCommit } from './group-commit.js'

/** A group commit whose commits are recorded; items named `dup*` are refused. */
function recorder() {
  const batches: string[][] = []
  const group = new GroupCommit<string>((items) => {
    batches.push([...items])
    return items.map((item) => (item.startsWith('dup') ? new Error(`refused ${item}`) : undefined))
  })
  return { batches, group }
}

describe('GroupCommit', () => {
  it('commits the items pushed in one turn of the event loop together', async () => {
    const { batches, group } = recorder()
    await Promise.all([group.push('a'), group.push('b'), group.push('c')])
    expect(batches).toEqual([['a', 'b', 'c']])
  })

  it('commits what writers push after a commit in the next batch, together', async () => {
    const { batches, group } = recorder()
    const writer = async (name: string) => {
      for (let step = 0; step < 3; step += 1) await group.push(`${name}${step}`)
    }
    await Promise.all([writer('a'), writer('b'), writer('c')])
    expect(batches).toEqual([
      ['a0', 'b0', 'c0'],
      ['a1', 'b1', 'c1'],
      ['a2', 'b2', 'c2'],
    ])
  })

  it('rejects only the items the commit refused', async () => {
    const { group } = recorder()
    const settled = await Promise.allSettled([group.push('a'), group.push('dup'), group.push('b')])
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  })

  it('rejects every item when the commit throws for each of them alone too', async () => {
    const failure = new Error('disk I/O error')
    const group = new GroupCommit<string>(() => {
      throw failure
    })
    const settled = await Promise.allSettled([group.push('a'), group.push('b')])
    expect(settled).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ])
  })

  it('commits the rest of a batch alone when one bad item makes the batch commit throw', async () => {
    const committed: string[][] = []
    const group = new GroupCommit<string>((items) => {
      if (items.includes('bad')) throw new Error(`constraint failed in a batch of ${items.length}`)
      committed.push([...items])
      return items.map(() => undefined)
    })
    const settled = await Promise.allSettled([group.push('a'), group.push('bad'), group.push('b')])
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(committed).toEqual([['a'], ['b']])
  })

  it('commits at once on flush, leaving nothing for the scheduled run', async () => {
    const { batches, group } = recorder()
    const pushed = group.push('a')
    group.flush()
    expect(batches).toEqual([['a']])
    await pushed
    await new Promise((resolve) => setImmediate(resolve))
    expect(batches).toEqual([['a']])
  })
})

/** A pipelined group commit whose commits take a few milliseconds (a round trip); `dup*` items are refused. */
function pipelined(fail?: (items: readonly string[]) => Error | undefined) {
  const batches: string[][] = []
  const group = new PipelinedGroupCommit<string>(
    async (items) => {
      batches.push([...items])
      await new Promise((resolve) => setTimeout(resolve, 5))
      const error = fail?.(items)
      if (error !== undefined) throw error
      return items.map((item) => (item.startsWith('dup') ? new Error(`refused ${item}`) : undefined))
    },
    (error) => (error as Error).message.startsWith('row'),
  )
  return { batches, group }
}

describe('PipelinedGroupCommit', () => {
  it('sends what writers push while a commit is in flight as the next batch, one batch at a time', async () => {
    const { batches, group } = pipelined()
    const writer = async (name: string) => {
      for (let step = 0; step < 3; step += 1) await group.push(`${name}${step}`)
    }
    const first = group.push('x')
    await new Promise((resolve) => setImmediate(resolve))
    // 'x' is in flight: the writers queue behind it and go out together.
    await Promise.all([first, writer('a'), writer('b'), writer('c')])
    expect(batches).toEqual([['x'], ['a0', 'b0', 'c0'], ['a1', 'b1', 'c1'], ['a2', 'b2', 'c2']])
  })

  it('rejects only the items the commit refused', async () => {
    const { group } = pipelined()
    const settled = await Promise.allSettled([group.push('a'), group.push('dup'), group.push('b')])
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  })

  it('commits each item alone, in order, when one item fails the batch, so only that item fails', async () => {
    const { batches, group } = pipelined((items) => (items.includes('bad') ? new Error(`row refused in a batch of ${items.length}`) : undefined))
    const settled = await Promise.allSettled([group.push('a'), group.push('bad'), group.push('b')])
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(batches).toEqual([['a', 'bad', 'b'], ['a'], ['bad'], ['b']])
  })

  it("rejects exactly a batch's items when its commit fails as a whole, and sends the next batch", async () => {
    const lost = new Error('connection lost')
    let failing = true
    const { batches, group } = pipelined(() => (failing ? lost : undefined))
    const failed = Promise.allSettled([group.push('a'), group.push('b')])
    await new Promise((resolve) => setImmediate(resolve))
    const next = group.push('c')
    expect(await failed).toEqual([
      { status: 'rejected', reason: lost },
      { status: 'rejected', reason: lost },
    ])
    // The next batch's commit reads `failing` after its round trip, by when it is cleared.
    failing = false
    await next
    expect(batches).toEqual([['a', 'b'], ['c']])
  })
})

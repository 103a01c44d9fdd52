import { describe, expect, it } from 'vitest'
import { SeamError } from '../../errors.js'
import { DisposableScope } from './scope.js'

describe('DisposableScope', () => {
  it('runs disposers once each in reverse order', async () => {
    const scope = new DisposableScope()
    const order: string[] = []
    scope.add(() => order.push('a'), 'a')
    scope.add(async () => order.push('b'), 'b')
    scope.add(() => order.push('c'), 'c')
    await scope.dispose()
    await scope.dispose()
    expect(order).toEqual(['c', 'b', 'a'])
  })

  it('runs synchronous disposers back to back, waiting only on those that return a promise', async () => {
    const scope = new DisposableScope()
    const order: string[] = []
    let finish!: () => void
    scope.add(() => order.push('a'), 'a')
    scope.add(() => new Promise<void>((resolve) => (finish = resolve)).then(() => order.push('b')), 'b')
    scope.add(() => order.push('c'), 'c')
    scope.add(() => order.push('d'), 'd')
    const disposed = scope.dispose()
    // Before any tick: the synchronous disposers after the last one added ran, down to the pending one.
    expect(order).toEqual(['d', 'c'])
    finish()
    await disposed
    expect(order).toEqual(['d', 'c', 'b', 'a'])
  })

  it('aggregates failures into one error naming each label, after running every disposer', async () => {
    const scope = new DisposableScope()
    const ran: string[] = []
    scope.add(() => ran.push('first'), 'first')
    scope.add(() => {
      throw new Error('socket stuck')
    }, 'socket')
    scope.add(() => Promise.reject(new Error('timer gone')), 'timer')
    const error = await scope.dispose().catch((e: unknown) => e)
    expect(SeamError.is(error, 'DISPOSE_FAILED')).toBe(true)
    expect((error as SeamError).message).toContain('socket: socket stuck')
    expect((error as SeamError).message).toContain('timer: timer gone')
    expect(ran).toEqual(['first'])
  })

  it('lets a disposer run early exactly once and skips it at disposal', async () => {
    const scope = new DisposableScope()
    let count = 0
    const dispose = scope.add(() => count++, 'early')
    dispose()
    dispose()
    await scope.dispose()
    expect(count).toBe(1)
  })

  it('refuses registrations after disposal with a coded error', async () => {
    const scope = new DisposableScope()
    await scope.dispose()
    expect(() => scope.add(() => {}, 'late')).toThrowError(expect.objectContaining({ code: 'CLOSED' }))
  })
})

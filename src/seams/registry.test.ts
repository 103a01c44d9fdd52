import { describe, expect, it } from 'vitest'
import { SeamError } from '../errors.js'
import { SeamProviderRegistry } from './registry.js'

interface Provider {
  readonly id: string
  readonly tag: string
}

const p = (id: string, tag = id): Provider => ({ id, tag })
const tags = (providers: readonly Provider[]) => providers.map((x) => x.tag)

describe('SeamProviderRegistry', () => {
  it('shows a global provider to every owner', () => {
    const registry = new SeamProviderRegistry<Provider>()
    registry.register('global', p('search'))
    expect(tags(registry.getFor('root'))).toEqual(['search'])
    expect(tags(registry.getFor('root/maps'))).toEqual(['search'])
    expect(tags(registry.getFor('global'))).toEqual(['search'])
  })

  it('shows an owner-scoped provider only to that owner', () => {
    const registry = new SeamProviderRegistry<Provider>()
    registry.register('root/maps', p('tiles'))
    expect(tags(registry.getFor('root/maps'))).toEqual(['tiles'])
    expect(registry.getFor('root')).toEqual([])
    expect(registry.getFor('root/maps/inner')).toEqual([])
    expect(registry.getFor('global')).toEqual([])
    expect(registry.getById('root', 'tiles')).toBeUndefined()
    expect(registry.getById('root/maps', 'tiles')?.tag).toBe('tiles')
  })

  it('throws at registration on a duplicate provider id in one scope, naming the id and the scope', () => {
    const registry = new SeamProviderRegistry<Provider>('tool service')
    registry.register('root/maps', p('tiles'))
    let error: unknown
    try {
      registry.register('root/maps', p('tiles', 'second'))
    } catch (e) {
      error = e
    }
    expect(SeamError.is(error, 'DUPLICATE_PROVIDER')).toBe(true)
    expect((error as SeamError).message).toContain('"tiles"')
    expect((error as SeamError).message).toContain('"root/maps"')
    expect((error as SeamError).details).toEqual({ id: 'tiles', scope: 'root/maps' })
    expect(tags(registry.getFor('root/maps'))).toEqual(['tiles'])
  })

  it('accepts the same provider id in two different scopes', () => {
    const registry = new SeamProviderRegistry<Provider>()
    registry.register('global', p('search', 'global'))
    registry.register('root', p('search', 'root'))
    registry.register('root/maps', p('search', 'maps'))
    expect(registry.size).toBe(3)
    expect(registry.scopes()).toEqual(['global', 'root', 'root/maps'])
  })

  it('replaces a global provider with a scoped one of the same id for that owner only, in the global position', () => {
    const registry = new SeamProviderRegistry<Provider>()
    registry.register('global', p('a'))
    registry.register('global', p('b', 'b-global'))
    registry.register('global', p('c'))
    registry.register('root/maps', p('b', 'b-maps'))
    registry.register('root/maps', p('d'))
    expect(tags(registry.getFor('root/maps'))).toEqual(['a', 'b-maps', 'c', 'd'])
    expect(tags(registry.getFor('root'))).toEqual(['a', 'b-global', 'c'])
    expect(registry.getById('root/maps', 'b')?.tag).toBe('b-maps')
    expect(registry.getById('root', 'b')?.tag).toBe('b-global')
  })

  it('restores the global provider for an owner once its scoped replacement is disposed', () => {
    const registry = new SeamProviderRegistry<Provider>()
    registry.register('global', p('b', 'b-global'))
    const dispose = registry.register('root', p('b', 'b-root'))
    expect(tags(registry.getFor('root'))).toEqual(['b-root'])
    dispose()
    expect(tags(registry.getFor('root'))).toEqual(['b-global'])
  })

  it('makes disposers idempotent, each removing only its own registration', () => {
    const registry = new SeamProviderRegistry<Provider>()
    const disposeA = registry.register('global', p('a'))
    const disposeB = registry.register('global', p('b'))
    disposeA()
    disposeA()
    expect(tags(registry.getFor('root'))).toEqual(['b'])
    expect(registry.size).toBe(1)
    disposeB()
    expect(registry.size).toBe(0)
  })

  it('never lets a stale disposer remove a newer registration under the same id', () => {
    const registry = new SeamProviderRegistry<Provider>()
    const first = registry.register('global', p('a', 'A'))
    first()
    registry.register('global', p('a', "A'"))
    first()
    expect(tags(registry.getFor('root'))).toEqual(["A'"])
    expect(registry.size).toBe(1)
  })

  it('never lets a stale disposer remove a newer registration of the very same provider object', () => {
    const registry = new SeamProviderRegistry<Provider>()
    const provider = p('a')
    const first = registry.register('root', provider)
    first()
    registry.register('root', provider)
    first()
    expect(registry.getFor('root')).toEqual([provider])
  })

  it('rejects a blank scope and a provider without an id', () => {
    const registry = new SeamProviderRegistry<Provider>()
    expect(() => registry.register(' ', p('a'))).toThrowError(expect.objectContaining({ code: 'INVALID_PLUGIN' }))
    expect(() => registry.register('global', p(''))).toThrowError(expect.objectContaining({ code: 'INVALID_PLUGIN' }))
    expect(registry.size).toBe(0)
  })
})

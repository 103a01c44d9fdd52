import { describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import { PluginInstance } from './plugin-instance.js'
import type { PluginContext } from '../../features/plugin-types.js'
import { definePlugin } from './plugin.js'
import { createToken } from '../../seams/tokens.js'
import { logger, mount, mountError, tool } from './fixtures/plugin-kit.js'

describe('PluginInstance: disposal', () => {
  it('runs every disposer once, in reverse order of registration', async () => {
    const log: string[] = []
    const instance = await mount(
      definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.effect(() => log.push('first effect'), 'first')
          ctx.resources.provide(createToken<number>('answer'), 42, () => log.push('resource'))
          ctx.effect(() => log.push('second effect'), 'second')
          return () => log.push('setup disposer')
        },
      }),
    )
    await instance.scope.dispose()
    await instance.scope.dispose()
    expect(log).toEqual(['setup disposer', 'second effect', 'resource', 'first effect'])
  })

  it('aggregates disposer failures into one DISPOSE_FAILED error naming each label, after running them all', async () => {
    const log: string[] = []
    const instance = await mount(
      definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.effect(() => log.push('kept'), 'kept')
          ctx.effect(() => {
            throw new Error('socket stuck')
          }, 'socket')
          ctx.effect(async () => {
            throw new Error('timer gone')
          }, 'timer')
        },
      }),
    )
    const error = await instance.scope.dispose().catch((e: unknown) => e)
    expect(SeamError.is(error, 'DISPOSE_FAILED')).toBe(true)
    expect((error as SeamError).message).toBe('2 disposer(s) failed: timer: timer gone; socket: socket stuck')
    expect((error as SeamError).details).toEqual({ labels: ['timer', 'socket'] })
    expect(log).toEqual(['kept'])
  })

  it('disposes a nested plugin in LIFO order with its parent registrations', async () => {
    const log: string[] = []
    const child = definePlugin({
      name: 'maps',
      setup(ctx) {
        ctx.effect(() => log.push('child'), 'child')
      },
    })
    const instance = await mount(
      definePlugin({
        name: 'root',
        async setup(ctx) {
          ctx.effect(() => log.push('parent before'), 'before')
          await ctx.plugin(child)
          ctx.effect(() => log.push('parent after'), 'after')
        },
      }),
    )
    await instance.scope.dispose()
    expect(log).toEqual(['parent after', 'child', 'parent before'])
  })

  it('lets an effect disposer run early exactly once and skips it at disposal', async () => {
    let count = 0
    let early: (() => void) | undefined
    const instance = await mount(
      definePlugin({
        name: 'root',
        setup(ctx) {
          early = ctx.effect(() => count++, 'counter')
        },
      }),
    )
    early!()
    early!()
    await instance.scope.dispose()
    expect(count).toBe(1)
  })

  it('disposes only when the last retained reference is released', async () => {
    const log: string[] = []
    const instance = await mount(definePlugin({ name: 'root', setup: (ctx) => void ctx.effect(() => log.push('disposed'), 'e') }))
    instance.retain()
    instance.retain()
    await instance.release()
    expect(log).toEqual([])
    await instance.release()
    expect(log).toEqual(['disposed'])
  })
})

describe('PluginInstance: setup', () => {
  it('awaits an async setup before the plugin counts as mounted', async () => {
    const instance = await mount(
      definePlugin({
        name: 'root',
        async setup(ctx) {
          await new Promise((resolve) => setTimeout(resolve, 5))
          ctx.addTool('late', tool())
        },
      }),
    )
    expect([...instance.tools.keys()]).toEqual(['late'])
  })

  it('gives the setup context the owner id, generation and plugin name', async () => {
    let seen: PluginContext | undefined
    const setup = (ctx: PluginContext) => {
      seen = ctx
    }
    const instance = await PluginInstance.mount(definePlugin({ name: 'my-root', setup }), { generation: 7, logger })
    onTestFinished(() => instance.scope.dispose())
    expect(seen).toMatchObject({ name: 'my-root', owner: 'root', generation: 7 })
    expect(Object.isFrozen(seen)).toBe(true)
  })

  it('gives nested plugins owner ids that are the path of names', async () => {
    const owners: string[] = []
    const tiles = definePlugin({ name: 'tiles', setup: (ctx) => void owners.push(ctx.owner) })
    const maps = definePlugin({ name: 'maps', plugins: [tiles], setup: (ctx) => void owners.push(ctx.owner) })
    const search = definePlugin({ name: 'search', setup: (ctx) => void owners.push(ctx.owner) })
    const instance = await mount(
      definePlugin({
        name: 'my-agent-root',
        plugins: [maps],
        async setup(ctx) {
          owners.push(ctx.owner)
          await ctx.plugin(search)
        },
      }),
    )
    expect(owners).toEqual(['root/maps/tiles', 'root/maps', 'root', 'root/search'])
    expect([...instance.walk()].map((p) => p.owner)).toEqual(['root', 'root/maps', 'root/maps/tiles', 'root/search'])
  })

  it('qualifies child tool names as <child>__<name> and leaves root tool names bare', async () => {
    const instance = await mount(
      definePlugin({
        name: 'root',
        plugins: [definePlugin({ name: 'maps', plugins: [definePlugin({ name: 'tiles' })] })],
      }),
    )
    const [root, maps, tiles] = [...instance.walk()]
    expect(root!.qualify('find')).toBe('find')
    expect(maps!.qualify('find')).toBe('maps__find')
    expect(tiles!.qualify('find')).toBe('maps__tiles__find')
  })

  it('rejects two children with the same name', async () => {
    const error = await mountError(
      definePlugin({ name: 'root', plugins: [definePlugin({ name: 'maps' }), definePlugin({ name: 'maps' })] }),
    )
    expect(error.code).toBe('SETUP_FAILED')
    expect(error.message).toContain('mounts two children named "maps"')
  })

  it('rolls back everything a throwing setup created and names the plugin in SETUP_FAILED', async () => {
    const log: string[] = []
    const child = definePlugin({ name: 'maps', setup: (ctx) => void ctx.effect(() => log.push('child effect'), 'child') })
    const error = await mountError(
      definePlugin({
        name: 'root',
        async setup(ctx) {
          ctx.effect(() => log.push('effect'), 'effect')
          ctx.resources.provide(createToken<string>('db'), 'conn', () => log.push('resource'))
          await ctx.plugin(child)
          throw new Error('config missing')
        },
      }),
    )
    expect(error.code).toBe('SETUP_FAILED')
    expect(error.message).toBe('plugin "root" failed to set up: config missing')
    expect((error.cause as Error).message).toBe('config missing')
    expect(log).toEqual(['child effect', 'resource', 'effect'])
  })

  it('names the failing child and rolls back its earlier siblings and the parent', async () => {
    const log: string[] = []
    const good = definePlugin({ name: 'good', setup: (ctx) => void ctx.effect(() => log.push('good'), 'good') })
    const bad = definePlugin({
      name: 'bad',
      setup(ctx) {
        ctx.effect(() => log.push('bad'), 'bad')
        throw new Error('boom')
      },
    })
    const error = await mountError(definePlugin({ name: 'root', plugins: [good, bad] }))
    expect(error.message).toBe('plugin "root/bad" failed to set up: boom')
    expect(error.details).toEqual({ owner: 'root/bad' })
    expect(log).toEqual(['bad', 'good'])
  })
})

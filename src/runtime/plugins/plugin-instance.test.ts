import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { SeamError } from '../../errors.js'
import { defineTool, type ToolDefinition } from '../../features/define-tool.js'
import { Logger } from '../base/logger.js'
import { PluginInstance } from './plugin-instance.js'
import type { PluginContext, PluginDefinition } from '../../features/plugin-types.js'
import { definePlugin } from './plugin.js'
import { createToken } from '../../seams/tokens.js'
import { createRoot } from '../../index.js'

const logger = new Logger(() => {})

async function mount(definition: PluginDefinition): Promise<PluginInstance> {
  const instance = await PluginInstance.mount(definition, { generation: 1, logger })
  onTestFinished(() => instance.scope.dispose().catch(() => {}))
  return instance
}

async function mountError(definition: PluginDefinition): Promise<SeamError> {
  const error = await PluginInstance.mount(definition, { generation: 1, logger }).then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!SeamError.is(error)) throw new Error(`expected a SeamError, got ${String(error)}`)
  return error
}

const tool = (description = 'A tool.'): ToolDefinition =>
  defineTool({ description, input: z.object({}), approval: 'never', execute: () => 'ok' }) as ToolDefinition

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

describe('PluginInstance: resources', () => {
  const db = createToken<{ url: string }>('db')

  it('provides a resource to its own plugin and to descendants, not to ancestors', async () => {
    let childSees: unknown
    let childUses: unknown
    const instance = await mount(
      definePlugin({
        name: 'root',
        plugins: [
          definePlugin({
            name: 'store',
            setup(ctx) {
              ctx.resources.provide(createToken<string>('cache'), 'lru')
            },
          }),
        ],
        async setup(ctx) {
          ctx.resources.provide(db, { url: 'memory:' })
          await ctx.plugin(
            definePlugin({
              name: 'maps',
              setup(child) {
                childSees = child.resources.get(db)
                childUses = child.use(db)
              },
            }),
          )
        },
      }),
    )
    expect(instance.resources.get(db)).toEqual({ url: 'memory:' })
    expect(childSees).toEqual({ url: 'memory:' })
    expect(childUses).toBe(childSees)
    expect(instance.resources.get(createToken<string>('cache'))).toBeUndefined()
  })

  it('throws MISSING_RESOURCE from use() naming the token and the owner', async () => {
    let error: unknown
    await mount(
      definePlugin({
        name: 'root',
        setup(ctx) {
          try {
            ctx.use(db)
          } catch (e) {
            error = e
          }
        },
      }),
    )
    expect(error).toMatchObject({ code: 'MISSING_RESOURCE', message: 'no plugin provides resource "db" to "root"' })
  })

  it('refuses to provide one token twice in one plugin', async () => {
    const error = await mountError(
      definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.resources.provide(db, { url: 'a' })
          ctx.resources.provide(db, { url: 'b' })
        },
      }),
    )
    expect(error.message).toContain('resource "db" is already provided by plugin "root"')
  })

  it('removes a provided resource and runs its dispose when the plugin scope is disposed', async () => {
    const log: string[] = []
    const instance = await PluginInstance.mount(
      definePlugin({ name: 'root', setup: (ctx) => ctx.resources.provide(db, { url: 'x' }, () => log.push('closed')) }),
      { generation: 1, logger },
    )
    await instance.scope.dispose()
    expect(log).toEqual(['closed'])
    expect(instance.resources.get(db)).toBeUndefined()
  })
})

describe('PluginInstance: tools, skills, hooks', () => {
  it('registers tools and skills with disposers that remove them', async () => {
    let removeTool: (() => void) | undefined
    let removeSkill: (() => void) | undefined
    const instance = await mount(
      definePlugin({
        name: 'root',
        setup(ctx) {
          removeTool = ctx.addTool('lookup', tool())
          removeSkill = ctx.addSkill('triage', { description: 'Triage', instructions: '# Triage' })
        },
      }),
    )
    expect([...instance.tools.keys()]).toEqual(['lookup'])
    expect(instance.skills.get('triage')).toMatchObject({ description: 'Triage', instructions: '# Triage' })
    removeTool!()
    removeSkill!()
    expect(instance.tools.size + instance.skills.size).toBe(0)
  })

  it.each([
    ['a bad tool name', (ctx: PluginContext) => ctx.addTool('Bad Name', tool()), 'INVALID_TOOL'],
    ['a tool not made with defineTool', (ctx: PluginContext) => ctx.addTool('raw', { execute: () => 1 } as unknown as ToolDefinition), 'INVALID_TOOL'],
    ['a tool added twice', (ctx: PluginContext) => [ctx.addTool('twice', tool()), ctx.addTool('twice', tool())], 'DUPLICATE_CAPABILITY'],
    ['a bad skill name', (ctx: PluginContext) => ctx.addSkill('', { description: 'd', instructions: 'i' }), 'INVALID_SKILL'],
    ['a skill without a description', (ctx: PluginContext) => ctx.addSkill('s', { description: '', instructions: 'i' }), 'INVALID_SKILL'],
  ])('fails setup on %s with a coded cause', async (_label, register, code) => {
    const error = await mountError(definePlugin({ name: 'root', setup: (ctx) => void register(ctx) }))
    expect(error.code).toBe('SETUP_FAILED')
    expect(SeamError.is(error.cause, code as SeamError['code'])).toBe(true)
  })

  it('registers hooks and guards in order, each with a disposer that removes only itself', async () => {
    const disposers: (() => void)[] = []
    const guardA = () => undefined
    const guardB = () => 'no'
    const pre = () => ({ kind: 'allow' as const })
    const instance = await mount(
      definePlugin({
        name: 'root',
        setup(ctx) {
          disposers.push(ctx.guards.add(guardA), ctx.guards.add(guardB), ctx.hooks.preExecute(pre))
        },
      }),
    )
    expect(instance.hooks.guards).toEqual([guardA, guardB])
    expect(instance.hooks.preExecute).toEqual([pre])
    disposers[0]!()
    disposers[0]!()
    expect(instance.hooks.guards).toEqual([guardB])
  })

  it('refuses a hook that is not a function', async () => {
    const error = await mountError(
      definePlugin({ name: 'root', setup: (ctx) => void ctx.hooks.result('nope' as unknown as () => void) }),
    )
    expect((error.cause as SeamError).message).toBe('root: result observer must be a function')
  })
})

describe('plugins in a root', () => {
  it('projects child plugin tools under qualified names owned by the child', async () => {
    const root = await createRoot({
      plugin: definePlugin({
        name: 'root',
        plugins: [definePlugin({ name: 'maps', setup: (ctx) => void ctx.addTool('find_place', tool('Find a place.')) })],
        setup: (ctx) => void ctx.addTool('hello', tool('Say hello.')),
      }),
    })
    onTestFinished(() => root.close())
    const capabilities = await root.capabilities()
    expect(capabilities.tools.map((t) => [t.name, t.owner, t.source])).toEqual([
      ['hello', 'root', 'addTool(root)'],
      ['maps__find_place', 'root/maps', 'addTool(root/maps)'],
    ])
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u', roles: [] } })
    onTestFinished(() => turn.end())
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'maps__find_place', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'completed', value: 'ok' })
  })

  it('keeps the previous generation when a re-run setup throws, after rolling back what it created', async () => {
    const log: string[] = []
    let fail = false
    const root = await createRoot({
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          const n = ctx.generation
          ctx.effect(() => log.push(`dispose ${n}`), `effect ${n}`)
          ctx.addTool('version', defineTool({ description: 'Which generation.', input: z.object({}), approval: 'never', execute: () => n }))
          if (fail) throw new Error('bad config')
        },
      }),
    })
    onTestFinished(() => root.close())
    fail = true
    const result = await root.reload()
    expect(result.ok).toBe(false)
    expect(log).toEqual(['dispose 2'])
    expect(root.generation).toBe(1)
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u', roles: [] } })
    onTestFinished(() => turn.end())
    expect((await turn.tools.execute({ callId: 'c1', name: 'version', arguments: '{}' })).value).toBe(1)
  })
})

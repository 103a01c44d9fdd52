import { describe, expect, it } from 'vitest'
import { SeamError } from '../../errors.js'
import type { ToolDefinition } from '../../features/define-tool.js'
import { PluginInstance } from './plugin-instance.js'
import type { PluginContext } from '../../features/plugin-types.js'
import { definePlugin } from './plugin.js'
import { createToken } from '../../seams/tokens.js'
import { logger, mount, mountError, tool } from './fixtures/plugin-kit.js'

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

import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../features/define-tool.js'
import { definePlugin } from './plugin.js'
import { createRoot } from '../../index.js'
import { tool } from './fixtures/plugin-kit.js'

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

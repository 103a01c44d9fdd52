import { describe, expect, it } from 'vitest'
import type { ToolSchema } from '../../seams/types.js'
import { CapabilityIngress } from './capability-ingress.js'
import { definePlugin } from '../plugins/plugin.js'
import { feature, generationOf, names, schema, service, type Setup, skills, turnWith } from './fixtures/capability-ingress-kit.js'

describe('CapabilityIngress: projection', () => {
  it('merges Feature tools from addTool and Seam tools from providers into one frozen snapshot', async () => {
    const { generation, ingress } = await generationOf((ctx, seams) => {
      ctx.addTool('lookup', feature({ approval: 'never' }))
      seams.registerToolService('global', service('search', [schema('acme_search')]))
    })
    const capabilities = await ingress.read(generation, 'root')
    expect(capabilities).toMatchObject({ generation: 1, owner: 'root' })
    expect(capabilities.tools.map((t) => [t.name, t.kind, t.source, t.owner])).toEqual([
      ['lookup', 'feature', 'addTool(root)', 'root'],
      ['acme_search', 'seam', 'seam:search', 'root'],
    ])
    expect(capabilities.tools[0]).toMatchObject({ approval: 'never', parameters: { type: 'object', required: ['q'] } })
    expect(Object.isFrozen(capabilities)).toBe(true)
    expect(Object.isFrozen(capabilities.tools)).toBe(true)
    expect(capabilities.tools.every((t) => Object.isFrozen(t))).toBe(true)
    expect(Object.isFrozen(capabilities.skills)).toBe(true)
  })

  it("defaults an omitted seam approval to 'on-risk' and an omitted source to 'seam:<providerId>'", async () => {
    const { generation, ingress } = await generationOf((_ctx, seams) => {
      seams.registerToolService('global', service('acme:search', [schema('plain'), schema('explicit', { approval: 'always', source: 'remote:acme' })]))
    })
    const [plain, explicit] = (await ingress.read(generation)).tools
    expect(plain).toMatchObject({ name: 'plain', approval: 'on-risk', source: 'seam:acme:search' })
    expect(explicit).toMatchObject({ name: 'explicit', approval: 'always', source: 'remote:acme' })
  })

  it("defaults an omitted feature approval to 'on-risk'", async () => {
    const { generation, ingress } = await generationOf((ctx) => void ctx.addTool('lookup', feature()))
    expect((await ingress.read(generation)).tools[0]?.approval).toBe('on-risk')
  })

  it('trims seam tool names and skips empty names', async () => {
    const { generation, ingress } = await generationOf((_ctx, seams) => {
      seams.registerToolService('global', service('search', [schema('  spaced  '), schema(''), schema('   '), { type: 'function' } as ToolSchema]))
    })
    expect(names(await ingress.read(generation))).toEqual(['spaced'])
  })

  it('validates seam tool names as local ones are: a name with control characters is skipped, quoted in its diagnostic', async () => {
    const hostile = 'x\u001b[2J\u001b]0;pwned\u0007'
    const { generation, ingress } = await generationOf((_ctx, seams) => {
      seams.registerToolService('global', service('remote', [schema(hostile), schema('has space'), schema('a'.repeat(65)), schema('Get-Sum_2')]))
    })
    expect(names(await ingress.read(generation))).toEqual(['Get-Sum_2'])
    const messages = generation.diagnostics.map((d) => d.message)
    expect(messages).toHaveLength(3)
    expect(messages[0]).toBe(`tool ${JSON.stringify(hostile)} from "remote" has a name that is not 1-64 of [a-zA-Z0-9_-] starting with a letter or digit; skipped`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character must not survive
    for (const message of messages) expect(message).not.toMatch(/\u001b/)
  })

  it('trims seam skill names and skips empty names', async () => {
    const { generation, ingress } = await generationOf((_ctx, seams) => {
      seams.registerSkillService('global', skills('team', [' triage ', '', '  ']))
    })
    expect((await ingress.read(generation)).skills.map((s) => [s.name, s.instructions, s.source])).toEqual([['triage', '#  triage ', 'seam:team']])
  })

  it('skips a seam tool without a parameters object and leaves a diagnostic', async () => {
    const { generation, ingress } = await generationOf((_ctx, seams) => {
      const broken = { type: 'function', function: { name: 'broken', description: 'd' } } as unknown as ToolSchema
      seams.registerToolService('global', service('search', [broken, schema('fine')]))
    })
    expect(names(await ingress.read(generation))).toEqual(['fine'])
    expect(generation.diagnostics).toEqual([expect.objectContaining({ code: 'INVALID_TOOL', source: 'seam:search', message: expect.stringContaining('"broken"') })])
  })

  it('projects skills from addSkill and from skill providers', async () => {
    const { generation, ingress } = await generationOf((ctx, seams) => {
      ctx.addSkill('triage', { description: 'Triage', instructions: '# Triage', tools: ['lookup'], always: true })
      seams.registerSkillService('global', skills('team', ['release']))
    })
    expect((await ingress.read(generation)).skills).toEqual([
      { name: 'triage', description: 'Triage', instructions: '# Triage', source: 'addSkill(root)', owner: 'root', tools: ['lookup'], always: true },
      { name: 'release', description: 'release skill', instructions: '# release', source: 'seam:team', owner: 'root', tools: [], always: false },
    ])
  })

  it('shows an owner-scoped provider only in that owner projection', async () => {
    const { generation, ingress } = await generationOf(async (ctx, seams) => {
      await ctx.plugin(definePlugin({ name: 'maps' }))
      seams.registerToolService('global', service('everyone', [schema('shared')]))
      seams.registerToolService('root/maps', service('maps-only', [schema('tiles')]))
    })
    expect(names(await ingress.read(generation, 'root'))).toEqual(['shared'])
    expect(names(await ingress.read(generation, 'root/maps'))).toEqual(['shared', 'tiles'])
  })

  it('lets a scoped provider replace the global one with the same id for that owner', async () => {
    const { generation, ingress } = await generationOf(async (ctx, seams) => {
      await ctx.plugin(definePlugin({ name: 'maps' }))
      seams.registerToolService('global', service('search', [schema('search_global')]))
      seams.registerToolService('root/maps', service('search', [schema('search_maps')]))
    })
    expect(names(await ingress.read(generation, 'root'))).toEqual(['search_global'])
    expect(names(await ingress.read(generation, 'root/maps'))).toEqual(['search_maps'])
  })

  it('shows a child plugin tools to the child and its ancestors, not to a sibling', async () => {
    const { generation, ingress } = await generationOf(async (ctx) => {
      await ctx.plugin(definePlugin({ name: 'maps', setup: (c) => void c.addTool('find', feature()) }))
      await ctx.plugin(definePlugin({ name: 'search', setup: (c) => void c.addTool('query', feature()) }))
    })
    expect(names(await ingress.read(generation, 'root'))).toEqual(['maps__find', 'search__query'])
    expect(names(await ingress.read(generation, 'root/maps'))).toEqual(['maps__find'])
    expect(names(await ingress.read(generation, 'root/search'))).toEqual(['search__query'])
  })

  it('excludes a seam tool whose provider reports it unavailable, or whose isAvailable throws', async () => {
    const { generation, ingress } = await generationOf((_ctx, seams) => {
      seams.registerToolService('global', service('a', [schema('up'), schema('down')], { isAvailable: (_s, name) => name === 'up' }))
      seams.registerToolService('global', service('b', [schema('flaky')], { isAvailable: () => { throw new Error('no') } }))
    })
    expect(names(await ingress.read(generation))).toEqual(['up'])
  })
})

describe('CapabilityIngress: provider calls and failures', () => {
  it('calls schema(), catalog() and describe() once per generation and owner, not once per read', async () => {
    const tools = service('search', [schema('acme_search')])
    const team = skills('team', ['triage'])
    const ingress = new CapabilityIngress()
    const setup: Setup = (_ctx, seams) => {
      seams.registerToolService('global', tools)
      seams.registerSkillService('global', team)
    }
    const { generation } = await generationOf(setup, { ingress })
    for (let i = 0; i < 3; i++) await ingress.read(generation, 'root', turnWith())
    expect([tools.schemaSpy.mock.calls.length, team.catalog.mock.calls.length, team.describe.mock.calls.length]).toEqual([1, 1, 1])
    expect(tools.schemaSpy).toHaveBeenCalledWith('root')
    const next = await generationOf(setup, { ingress, number: 2 })
    await ingress.read(next.generation, 'root', turnWith())
    expect([tools.schemaSpy.mock.calls.length, team.catalog.mock.calls.length, team.describe.mock.calls.length]).toEqual([2, 2, 2])
  })

  it('lets a provider whose schema() throws contribute nothing, with a diagnostic, without taking others down', async () => {
    const { generation, ingress } = await generationOf((ctx, seams) => {
      ctx.addTool('local', feature())
      seams.registerToolService('global', service('broken', () => { throw new Error('connection refused') }))
      seams.registerToolService('global', service('rejecting', async () => Promise.reject(new Error('503'))))
      seams.registerToolService('global', service('garbage', () => 'nope' as unknown as ToolSchema[]))
      seams.registerToolService('global', service('healthy', [schema('remote')]))
    })
    expect(names(await ingress.read(generation))).toEqual(['local', 'remote'])
    expect(generation.diagnostics).toEqual([
      { code: 'PROVIDER_UNAVAILABLE', source: 'seam:broken', message: 'tool service "broken" contributed no tools: connection refused' },
      { code: 'PROVIDER_UNAVAILABLE', source: 'seam:rejecting', message: 'tool service "rejecting" contributed no tools: 503' },
      { code: 'PROVIDER_UNAVAILABLE', source: 'seam:garbage', message: 'tool service "garbage" contributed no tools: schema() did not return an array' },
    ])
  })

  it('lets a skill provider whose catalog() or describe() throws contribute nothing, with a diagnostic', async () => {
    const { generation, ingress } = await generationOf((_ctx, seams) => {
      seams.registerSkillService('global', { ...skills('down', []), id: 'down', catalog: async () => Promise.reject(new Error('offline')) })
      const partial = skills('partial', ['a', 'b'])
      partial.describe.mockImplementation(async (_s, name) => (name === 'b' ? Promise.reject(new Error('gone')) : `# ${name}`))
      seams.registerSkillService('global', partial)
      seams.registerSkillService('global', skills('fine', ['ok']))
    })
    expect((await ingress.read(generation)).skills.map((s) => s.name)).toEqual(['ok'])
    expect(generation.diagnostics.map((d) => [d.source, d.message])).toEqual([
      ['seam:down', 'skill service "down" contributed no skills: offline'],
      ['seam:partial', 'skill service "partial" contributed no skills: gone'],
    ])
  })
})

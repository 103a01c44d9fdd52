import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { z } from 'zod'
import type { SeamError } from '../../errors.js'
import { defineTool, type ToolSpec } from '../../features/define-tool.js'
import { capabilitySeamToken, SeamIntegration } from '../../seams/integration.js'
import type { SkillService, ToolSchema, ToolService } from '../../seams/types.js'
import type { PermissionHost } from '../../seams/approval.js'
import { CapabilityIngress } from './capability-ingress.js'
import { toolsByName } from './tool-binding.js'
import { Generation } from './generation.js'
import { buildGeneration } from './generation-builder.js'
import { memoryJournal } from '../journal/memory.js'
import { Logger } from '../base/logger.js'
import { PluginInstance } from '../plugins/plugin-instance.js'
import type { PluginContext } from '../../features/plugin-types.js'
import { definePlugin } from '../plugins/plugin.js'
import { createTurnIngress } from '../turns/turn-ingress.js'
import type { TurnOrigin } from '../../seams/types.js'

const logger = new Logger(() => {})
const journal = memoryJournal()
const grantAll: PermissionHost = { check: () => true }

type Setup = (ctx: PluginContext, seams: SeamIntegration) => void | Promise<void>

/** Builds generation `number` of a root whose setup gets a SeamIntegration provided under the seam token. */
async function build(setup: Setup, options: { permissions?: PermissionHost; ingress?: CapabilityIngress; number?: number } = {}) {
  const ingress = options.ingress ?? new CapabilityIngress({ permissions: options.permissions })
  const plugin = definePlugin({
    name: 'root',
    async setup(ctx) {
      const seams = new SeamIntegration()
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
      await setup(ctx, seams)
    },
  })
  const result = await buildGeneration({ number: options.number ?? 1, plugin, ingress, logger })
  if (result.ok) {
    result.generation.activate()
    onTestFinished(() => result.generation.dispose())
  }
  return { result, ingress }
}

async function generationOf(setup: Setup, options: { permissions?: PermissionHost; ingress?: CapabilityIngress; number?: number } = {}) {
  const { result, ingress } = await build(setup, options)
  if (!result.ok) throw result.error
  return { generation: result.generation, ingress }
}

async function buildError(setup: Setup): Promise<SeamError> {
  const { result } = await build(setup)
  if (result.ok) throw new Error('expected the build to fail')
  return result.error
}

function turnWith(origin?: TurnOrigin) {
  return createTurnIngress({ session: 's', principal: { subjectId: 'u1', roles: ['staff'] }, signal: new AbortController().signal, journal, origin })
}

function schema(name: string, extra: Partial<ToolSchema> = {}): ToolSchema {
  return { type: 'function', function: { name, description: `${name} tool`, parameters: { type: 'object', properties: {} } }, ...extra }
}

function service(id: string, schemas: ToolSchema[] | (() => ToolSchema[] | Promise<ToolSchema[]>), extra: Partial<ToolService> = {}) {
  const schemaSpy = vi.fn(typeof schemas === 'function' ? schemas : () => schemas)
  const execute = vi.fn(async () => ({ success: true as const, output: id }))
  const provider: ToolService = { id, description: `${id} provider`, schema: schemaSpy, execute, ...extra }
  return Object.assign(provider, { schemaSpy, execute })
}

function skills(id: string, names: string[]) {
  const catalog = vi.fn(async () => names.map((name) => ({ name, description: `${name} skill` })))
  const describe = vi.fn(async (_scope: string, name: string) => `# ${name}`)
  const provider: SkillService = { id, description: `${id} skills`, catalog, describe }
  return Object.assign(provider, { catalog, describe })
}

function feature(spec: Partial<ToolSpec> = {}) {
  return defineTool({ description: 'A feature tool.', input: z.object({ q: z.string() }), execute: () => 'ok', ...spec })
}

const names = (capabilities: { tools: readonly { name: string }[] }) => capabilities.tools.map((t) => t.name)

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

describe('CapabilityIngress: visibility', () => {
  it('excludes hidden tools, Feature and Seam alike', async () => {
    const { generation, ingress } = await generationOf((ctx, seams) => {
      ctx.addTool('shown_feature', feature())
      ctx.addTool('hidden_feature', feature({ hidden: true }))
      seams.registerToolService('global', service('search', [schema('shown_seam'), schema('hidden_seam', { hidden: true })]))
    })
    expect(names(await ingress.read(generation, 'root', turnWith({ kind: 'im', platform: 'discord', scope: 'group' })))).toEqual([
      'shown_feature',
      'shown_seam',
    ])
  })

  const filters = [
    {
      filter: 'platforms',
      policy: { platforms: ['discord'] },
      matching: { kind: 'im', platform: 'discord' },
      other: { kind: 'im', platform: 'slack' },
    },
    {
      filter: 'scopes',
      policy: { scopes: ['group' as const, 'channel' as const] },
      matching: { kind: 'im', scope: 'channel' as const },
      other: { kind: 'im', scope: 'private' as const },
    },
  ]
  const kinds = [
    { kind: 'feature', setup: (policy: object): Setup => (ctx) => void ctx.addTool('gated', feature(policy)) },
    {
      kind: 'seam',
      setup: (policy: object): Setup => (_ctx, seams) => void seams.registerToolService('global', service('svc', [schema('gated', policy)])),
    },
  ]

  for (const { filter, policy, matching, other } of filters) {
    for (const { kind, setup } of kinds) {
      it(`shows a ${kind} tool with ${filter} to a turn whose origin matches`, async () => {
        const { generation, ingress } = await generationOf(setup(policy))
        expect(names(await ingress.read(generation, 'root', turnWith(matching)))).toEqual(['gated'])
      })

      it(`hides a ${kind} tool with ${filter} from a turn whose origin does not match, has no origin, or is absent`, async () => {
        const { generation, ingress } = await generationOf(setup(policy))
        expect(names(await ingress.read(generation, 'root', turnWith(other)))).toEqual([])
        expect(names(await ingress.read(generation, 'root', turnWith()))).toEqual([])
        expect(names(await ingress.read(generation, 'root'))).toEqual([])
      })
    }
  }

  for (const { kind, setup } of kinds) {
    it(`shows a ${kind} tool with permissions when the PermissionHost grants all of them to the turn principal`, async () => {
      const check = vi.fn<PermissionHost['check']>(() => true)
      const { generation, ingress } = await generationOf(setup({ permissions: ['tickets:read', 'tickets:write'] }), { permissions: { check } })
      expect(names(await ingress.read(generation, 'root', turnWith()))).toEqual(['gated'])
      expect(check.mock.calls.map(([permission, principal]) => [permission, principal.subjectId])).toEqual([
        ['tickets:read', 'u1'],
        ['tickets:write', 'u1'],
      ])
    })

    it(`hides a ${kind} tool with permissions when one permission is denied`, async () => {
      const permissions = { check: (p: string) => p !== 'tickets:write' }
      const { generation, ingress } = await generationOf(setup({ permissions: ['tickets:read', 'tickets:write'] }), { permissions })
      expect(names(await ingress.read(generation, 'root', turnWith()))).toEqual([])
    })

    it(`hides a ${kind} tool with permissions when the PermissionHost throws or answers something other than true`, async () => {
      const throwing = { check: async () => Promise.reject(new Error('directory down')) }
      const a = await generationOf(setup({ permissions: ['tickets:read'] }), { permissions: throwing })
      expect(names(await a.ingress.read(a.generation, 'root', turnWith()))).toEqual([])
      const truthy = { check: () => 'yes' as unknown as boolean }
      const b = await generationOf(setup({ permissions: ['tickets:read'] }), { permissions: truthy })
      expect(names(await b.ingress.read(b.generation, 'root', turnWith()))).toEqual([])
    })

    it(`hides a ${kind} tool with permissions without a turn or without a PermissionHost`, async () => {
      const a = await generationOf(setup({ permissions: ['tickets:read'] }), { permissions: grantAll })
      expect(names(await a.ingress.read(a.generation, 'root'))).toEqual([])
      const b = await generationOf(setup({ permissions: ['tickets:read'] }))
      expect(names(await b.ingress.read(b.generation, 'root', turnWith()))).toEqual([])
    })
  }

  it('needs every filter to pass when a tool declares several', async () => {
    const { generation, ingress } = await generationOf((ctx) => void ctx.addTool('gated', feature({ platforms: ['discord'], scopes: ['group'], permissions: ['p'] })), { permissions: grantAll })
    expect(names(await ingress.read(generation, 'root', turnWith({ kind: 'im', platform: 'discord', scope: 'group' })))).toEqual(['gated'])
    expect(names(await ingress.read(generation, 'root', turnWith({ kind: 'im', platform: 'discord', scope: 'private' })))).toEqual([])
    expect(names(await ingress.read(generation, 'root', turnWith({ kind: 'im', platform: 'slack', scope: 'group' })))).toEqual([])
  })

  it('returns the cached frozen projection when every tool is visible, and a frozen filtered copy otherwise', async () => {
    const { generation, ingress } = await generationOf((ctx) => {
      ctx.addTool('open', feature())
      ctx.addTool('gated', feature({ platforms: ['discord'] }))
    })
    const discord = turnWith({ kind: 'im', platform: 'discord' })
    const first = await ingress.read(generation, 'root', discord)
    expect(await ingress.read(generation, 'root', discord)).toBe(first)
    const filtered = await ingress.read(generation, 'root', turnWith())
    expect(names(filtered)).toEqual(['open'])
    expect(Object.isFrozen(filtered)).toBe(true)
    expect(filtered.tools[0]).toBe(first.tools[0])
  })
})

describe('CapabilityIngress: what a turn costs', () => {
  it('asks the PermissionHost once per distinct permission per turn, however many tools share it', async () => {
    const check = vi.fn<PermissionHost['check']>((permission) => permission === 'tickets:read')
    const { generation, ingress } = await generationOf(
      (ctx) => {
        for (let n = 0; n < 50; n += 1) ctx.addTool(`read_${n}`, feature({ permissions: ['tickets:read'] }))
        for (let n = 0; n < 50; n += 1) ctx.addTool(`write_${n}`, feature({ permissions: ['tickets:read', 'tickets:write'] }))
        ctx.addTool('open', feature())
      },
      { permissions: { check } },
    )
    const seen = await ingress.read(generation, 'root', turnWith())
    expect(seen.tools).toHaveLength(51)
    expect(names(seen).filter((name) => name.startsWith('write_'))).toEqual([])
    expect(check.mock.calls.map(([permission]) => permission).sort()).toEqual(['tickets:read', 'tickets:write'])
    await ingress.read(generation, 'root', turnWith())
    expect(check).toHaveBeenCalledTimes(4)
  })

  it('never asks the PermissionHost when no tool is gated, and hands every turn the same frozen catalog', async () => {
    const check = vi.fn<PermissionHost['check']>(() => true)
    const { generation, ingress } = await generationOf((ctx) => void ctx.addTool('open', feature()), { permissions: { check } })
    const first = await ingress.read(generation, 'root', turnWith())
    expect(await ingress.read(generation, 'root', turnWith({ kind: 'im', platform: 'discord' }))).toBe(first)
    expect(check).not.toHaveBeenCalled()
  })

  it('shares one filtered catalog between turns that are granted the same, and follows the host when its answer changes', async () => {
    let granted = true
    const { generation, ingress } = await generationOf(
      (ctx) => {
        ctx.addTool('open', feature())
        ctx.addTool('gated', feature({ permissions: ['p'] }))
      },
      { permissions: { check: () => granted } },
    )
    const withGrant = await ingress.read(generation, 'root', turnWith())
    expect(names(withGrant)).toEqual(['open', 'gated'])
    granted = false
    const without = await ingress.read(generation, 'root', turnWith())
    expect(names(without)).toEqual(['open'])
    expect(await ingress.read(generation, 'root', turnWith())).toBe(without)
    granted = true
    expect(await ingress.read(generation, 'root', turnWith())).toBe(withGrant)
  })

  it('hides only the tools of a permission whose check throws, not the others', async () => {
    const permissions: PermissionHost = {
      check: (permission) => {
        if (permission === 'broken') throw new Error('directory down')
        return true
      },
    }
    const { generation, ingress } = await generationOf(
      (ctx) => {
        ctx.addTool('fine', feature({ permissions: ['ok'] }))
        ctx.addTool('unlucky', feature({ permissions: ['broken'] }))
      },
      { permissions },
    )
    expect(names(await ingress.read(generation, 'root', turnWith()))).toEqual(['fine'])
  })

  it('looks tools up by name in a map built once per catalog, not once per turn', async () => {
    const { generation, ingress } = await generationOf((ctx) => void ctx.addTool('open', feature()))
    const seen = await ingress.read(generation, 'root', turnWith())
    const tools = toolsByName(seen, generation)
    expect([...tools.keys()]).toEqual(['open'])
    expect(tools.get('open')?.capability).toBe(seen.tools[0])
    expect(toolsByName(await ingress.read(generation, 'root', turnWith()), generation)).toBe(tools)
  })
})

describe('CapabilityIngress: duplicate names', () => {
  it('rejects a Feature and a Seam tool with the same visible name, naming the name and both sources', async () => {
    const error = await buildError((ctx, seams) => {
      ctx.addTool('lookup', feature())
      seams.registerToolService('global', service('tickets', [schema('lookup')]))
    })
    expect(error.code).toBe('DUPLICATE_CAPABILITY')
    expect(error.message).toBe('duplicate tool name "lookup": provided by addTool(root) and by seam:tickets')
    expect(error.details).toEqual({ name: 'lookup', sources: ['addTool(root)', 'seam:tickets'] })
  })

  it('rejects two Seam tools with the same name from two providers', async () => {
    const error = await buildError((_ctx, seams) => {
      seams.registerToolService('global', service('alpha', [schema('search')]))
      seams.registerToolService('global', service('beta', [schema(' search ', { source: 'remote:beta' })]))
    })
    expect(error.message).toBe('duplicate tool name "search": provided by seam:alpha and by remote:beta')
  })

  it('rejects two skills with the same name, naming both sources', async () => {
    const error = await buildError((ctx, seams) => {
      ctx.addSkill('triage', { description: 'Triage', instructions: '#' })
      seams.registerSkillService('global', skills('team', ['triage']))
    })
    expect(error).toMatchObject({ code: 'DUPLICATE_CAPABILITY', message: 'duplicate skill name "triage": provided by addSkill(root) and by seam:team' })
  })

  it('rejects two skill providers offering the same skill name', async () => {
    const error = await buildError((_ctx, seams) => {
      seams.registerSkillService('global', skills('one', ['triage']))
      seams.registerSkillService('global', skills('two', ['triage']))
    })
    expect(error.message).toBe('duplicate skill name "triage": provided by seam:one and by seam:two')
  })

  it('rejects a clash that only one owner sees', async () => {
    const error = await buildError(async (ctx, seams) => {
      await ctx.plugin(definePlugin({ name: 'maps' }))
      seams.registerToolService('global', service('a', [schema('tiles')]))
      seams.registerToolService('root/maps', service('b', [schema('tiles')]))
    })
    expect(error.message).toBe('duplicate tool name "tiles": provided by seam:a and by seam:b')
  })

  it('does not count a hidden tool as a clash', async () => {
    const { generation, ingress } = await generationOf((ctx, seams) => {
      ctx.addTool('lookup', feature({ hidden: true }))
      seams.registerToolService('global', service('a', [schema('lookup'), schema('search', { hidden: true })]))
      seams.registerToolService('global', service('b', [schema('search')]))
    })
    expect((await ingress.read(generation)).tools.map((t) => [t.name, t.source])).toEqual([
      ['lookup', 'seam:a'],
      ['search', 'seam:b'],
    ])
  })

  it('rejects read() with DUPLICATE_CAPABILITY for a generation whose projection clashes', async () => {
    const root = await PluginInstance.mount(
      definePlugin({
        name: 'root',
        setup(ctx) {
          const seams = new SeamIntegration()
          seams.registerToolService('global', service('a', [schema('x')]))
          seams.registerToolService('global', service('b', [schema('x')]))
          ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
        },
      }),
      { generation: 1, logger },
    )
    const generation = new Generation({ number: 1, root, tools: [], skills: [], diagnostics: [] })
    onTestFinished(() => generation.dispose())
    await expect(new CapabilityIngress().read(generation, 'root')).rejects.toMatchObject({
      code: 'DUPLICATE_CAPABILITY',
      message: 'duplicate tool name "x": provided by seam:a and by seam:b',
    })
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

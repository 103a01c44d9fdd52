import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { z } from 'zod'
import {
  SeamIntegration,
  capabilitySeamToken,
  createRoot,
  definePlugin,
  defineTool,
  type PermissionHost,
  type PluginContext,
  type ReloadFailedEvent,
  type Root,
  type SkillService,
  type ToolSchema,
  type ToolService,
  type ToolSpec,
} from 'seam-runtime'

const principal = { subjectId: 'u1', roles: [] }

type Setup = (ctx: PluginContext, seams: SeamIntegration) => void

/** A root whose setup gets a SeamIntegration provided under `capabilitySeamToken`; closed after the test. */
async function rootWith(setup: Setup, permissions?: PermissionHost): Promise<Root> {
  const root = await createRoot({
    permissions,
    plugin: definePlugin({
      name: 'root',
      setup(ctx) {
        const seams = new SeamIntegration()
        ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
        setup(ctx, seams)
      },
    }),
  })
  onTestFinished(() => root.close())
  return root
}

function provider(id: string, schemas: () => ToolSchema[] | Promise<ToolSchema[]>) {
  const schema = vi.fn(schemas)
  const execute = vi.fn(async (_scope: string, name: string) => ({ success: true as const, output: `${id}:${name}` }))
  const service: ToolService = { id, description: id, schema, execute }
  return { service, schema, execute }
}

function fn(name: string, extra: Partial<ToolSchema> = {}): ToolSchema {
  return { type: 'function', function: { name, description: name, parameters: { type: 'object' } }, approval: 'never', ...extra }
}

function feature(spec: Partial<ToolSpec> = {}) {
  return defineTool({ description: 'A feature tool.', input: z.object({}), approval: 'never', execute: () => 'feature ran', ...spec })
}

async function turnNames(root: Root, origin?: { kind: string; platform?: string; scope?: 'private' | 'group' | 'channel' }) {
  const turn = await root.beginTurn({ session: 's', principal, origin })
  onTestFinished(() => turn.end())
  return { turn, names: turn.capabilities.tools.map((t) => t.name) }
}

describe('capability projection through a root', () => {
  it('asks providers for schemas, catalogs and skill bodies once per generation, not once per turn', async () => {
    const tools = provider('search', () => [fn('acme_search')])
    const catalog = vi.fn(async () => [{ name: 'research', description: 'Research' }])
    const describe = vi.fn(async () => '# Research')
    const skills: SkillService = { id: 'skills', description: 'skills', catalog, describe }
    const root = await rootWith((_ctx, seams) => {
      seams.registerToolService('global', tools.service)
      seams.registerSkillService('global', skills)
    })
    const counts = () => [tools.schema.mock.calls.length, catalog.mock.calls.length, describe.mock.calls.length]
    for (let i = 0; i < 3; i++) {
      const { turn, names } = await turnNames(root)
      // The remote skill's instructions are not in the prompt: the built-in load_skill offers them.
      expect(names).toEqual(['acme_search', 'load_skill'])
      expect(turn.capabilities.skills.map((s) => s.instructions)).toEqual(['# Research'])
      await turn.end()
    }
    expect(counts()).toEqual([1, 1, 1])
    await root.reload()
    for (let i = 0; i < 3; i++) await (await turnNames(root)).turn.end()
    expect(counts()).toEqual([2, 2, 2])
  })

  it('runs a generation without a provider whose schema() throws, with a diagnostic, while the others serve', async () => {
    const broken = provider('broken', () => {
      throw new Error('ECONNREFUSED')
    })
    const healthy = provider('healthy', () => [fn('remote_ok')])
    const root = await rootWith((ctx, seams) => {
      ctx.addTool('local_ok', feature())
      seams.registerToolService('global', broken.service)
      seams.registerToolService('global', healthy.service)
    })
    expect(root.activeGeneration.diagnostics).toEqual([
      { code: 'PROVIDER_UNAVAILABLE', source: 'seam:broken', message: 'tool service "broken" contributed no tools: ECONNREFUSED' },
    ])
    const { turn, names } = await turnNames(root)
    expect(names).toEqual(['local_ok', 'remote_ok'])
    expect((await turn.tools.execute({ callId: 'c1', name: 'remote_ok', arguments: '{}' })).value).toBe('healthy:remote_ok')
    expect((await turn.tools.execute({ callId: 'c2', name: 'local_ok', arguments: '{}' })).value).toBe('feature ran')
    const reload = await root.reload()
    expect(reload).toMatchObject({ ok: true, diagnostics: [expect.objectContaining({ source: 'seam:broken' })] })
    expect(broken.execute).not.toHaveBeenCalled()
  })

  it('applies seam defaults end to end: an omitted approval asks, and with no approval port the provider never runs', async () => {
    const tools = provider('remote', () => [{ type: 'function', function: { name: 'mutate', description: 'Changes things', parameters: { type: 'object' } } }])
    const root = await rootWith((_ctx, seams) => void seams.registerToolService('global', tools.service))
    const { turn } = await turnNames(root)
    expect(turn.capabilities.tools[0]).toMatchObject({ approval: 'on-risk', source: 'seam:remote' })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'mutate', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'APPROVAL_UNAVAILABLE' })
    expect(tools.execute).not.toHaveBeenCalled()
  })

  it('fails and rolls back a reload that introduces a Feature vs Seam name clash, naming the name and both sources', async () => {
    let clash = false
    const log: string[] = []
    const root = await rootWith((ctx, seams) => {
      ctx.addTool('lookup', feature({ execute: () => `lookup from ${ctx.generation}` }))
      ctx.effect(() => log.push(`dispose ${ctx.generation}`), 'effect')
      if (clash) seams.registerToolService('global', provider('tickets', () => [fn('lookup')]).service)
    })
    const failures: ReloadFailedEvent[] = []
    root.on('reload-failed', (event) => failures.push(event))
    clash = true
    const result = await root.reload()
    expect(result.ok).toBe(false)
    expect(result).toHaveProperty('error', expect.objectContaining({
      code: 'DUPLICATE_CAPABILITY',
      message: 'duplicate tool name "lookup": provided by addTool(root) and by seam:tickets',
    }))
    expect(failures.map((f) => f.diagnostics[0]?.code)).toEqual(['DUPLICATE_CAPABILITY'])
    expect(log).toEqual(['dispose 2'])
    expect(root.generation).toBe(1)
    const { turn } = await turnNames(root)
    expect((await turn.tools.execute({ callId: 'c1', name: 'lookup', arguments: '{}' })).value).toBe('lookup from 1')
  })

  it('fails a reload with a Seam vs Seam clash and a skill vs skill clash', async () => {
    let mode: 'ok' | 'tools' | 'skills' = 'ok'
    const root = await rootWith((ctx, seams) => {
      seams.registerToolService('global', provider('alpha', () => [fn('search')]).service)
      if (mode === 'tools') seams.registerToolService('global', provider('beta', () => [fn('search')]).service)
      ctx.addSkill('triage', { description: 'Triage', instructions: '#' })
      if (mode === 'skills') {
        seams.registerSkillService('global', { id: 'team', description: 'team', catalog: async () => [{ name: 'triage', description: 'd' }], describe: async () => '#' })
      }
    })
    mode = 'tools'
    expect(await root.reload()).toMatchObject({ ok: false, error: { message: 'duplicate tool name "search": provided by seam:alpha and by seam:beta' } })
    mode = 'skills'
    expect(await root.reload()).toMatchObject({ ok: false, error: { message: 'duplicate skill name "triage": provided by addSkill(root) and by seam:team' } })
    expect(root.generation).toBe(1)
  })

  it('refuses to create a root whose first projection has a name clash', async () => {
    const plugin = definePlugin({
      name: 'root',
      setup(ctx) {
        const seams = new SeamIntegration()
        seams.registerToolService('global', provider('a', () => [fn('dup')]).service)
        seams.registerToolService('global', provider('b', () => [fn('dup')]).service)
        ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
      },
    })
    await expect(createRoot({ plugin })).rejects.toMatchObject({ code: 'RELOAD_FAILED', message: expect.stringContaining('duplicate tool name "dup"') })
  })
})

describe('visibility through a root, identical for Feature and Seam tools', () => {
  const kinds: { kind: string; register: (policy: object) => Setup }[] = [
    { kind: 'feature', register: (policy) => (ctx) => void ctx.addTool('gated', feature(policy)) },
    { kind: 'seam', register: (policy) => (_ctx, seams) => void seams.registerToolService('global', provider('svc', () => [fn('gated', policy)]).service) },
  ]

  for (const { kind, register } of kinds) {
    it(`hides a hidden ${kind} tool and answers a call to it with UNKNOWN_TOOL`, async () => {
      const root = await rootWith(register({ hidden: true }))
      const { turn, names } = await turnNames(root, { kind: 'im', platform: 'discord', scope: 'group' })
      expect(names).toEqual([])
      expect((await turn.tools.execute({ callId: 'c1', name: 'gated', arguments: '{}' })).code).toBe('UNKNOWN_TOOL')
    })

    it(`shows a ${kind} tool with platforms only to a turn from a matching platform`, async () => {
      const root = await rootWith(register({ platforms: ['discord'] }))
      const matching = await turnNames(root, { kind: 'im', platform: 'discord' })
      expect(matching.names).toEqual(['gated'])
      expect((await matching.turn.tools.execute({ callId: 'c1', name: 'gated', arguments: '{}' })).status).toBe('completed')
      expect((await turnNames(root, { kind: 'im', platform: 'slack' })).names).toEqual([])
      const none = await turnNames(root)
      expect(none.names).toEqual([])
      expect((await none.turn.tools.execute({ callId: 'c1', name: 'gated', arguments: '{}' })).code).toBe('UNKNOWN_TOOL')
    })

    it(`shows a ${kind} tool with scopes only to a turn from a matching scope`, async () => {
      const root = await rootWith(register({ scopes: ['private'] }))
      expect((await turnNames(root, { kind: 'im', scope: 'private' })).names).toEqual(['gated'])
      expect((await turnNames(root, { kind: 'im', scope: 'group' })).names).toEqual([])
      expect((await turnNames(root, { kind: 'cli' })).names).toEqual([])
    })

    it(`shows a ${kind} tool with permissions only when the PermissionHost grants every one`, async () => {
      const policy = { permissions: ['tickets:read', 'tickets:write'] }
      const granted = await rootWith(register(policy), { check: () => true })
      expect((await turnNames(granted)).names).toEqual(['gated'])
      const partly = await rootWith(register(policy), { check: (p) => p === 'tickets:read' })
      expect((await turnNames(partly)).names).toEqual([])
      const throwing = await rootWith(register(policy), {
        check: () => {
          throw new Error('directory down')
        },
      })
      expect((await turnNames(throwing)).names).toEqual([])
      const noHost = await rootWith(register(policy))
      expect((await turnNames(noHost)).names).toEqual([])
    })
  }

  it('skips a remote tool nested too deep to walk, with a diagnostic, and still projects the others', async () => {
    let deep: Record<string, unknown> = { type: 'string' }
    for (let i = 0; i < 20_000; i++) deep = { type: 'object', properties: { a: deep } }
    const root = await rootWith((_ctx, seams) => {
      seams.registerToolService('global', provider('remote', () => [fn('ok'), { type: 'function', function: { name: 'deep', description: 'D.', parameters: deep } }]).service)
    })
    const { names } = await turnNames(root)
    expect(names).toEqual(['ok'])
    expect(root.activeGeneration.diagnostics.map((d) => d.message)).toContainEqual(expect.stringContaining('nested deeper than 64 levels'))
  })

  it('keeps a frozen copy of a remote schema: the provider changing its object later changes nothing', async () => {
    const parameters = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }
    const root = await rootWith((_ctx, seams) => {
      seams.registerToolService('global', provider('remote', () => [{ type: 'function', function: { name: 'count', description: 'C.', parameters } }]).service)
    })
    const { turn } = await turnNames(root)
    const [tool] = turn.capabilities.tools
    expect(Object.isFrozen(tool!.parameters)).toBe(true)
    ;(parameters.properties.n as { type: string }).type = 'string'
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'count', arguments: '{"n":"not a number"}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
  })

  it('runs turns only as owners the generation knows: its plugins and its seam scopes, each projected when it was built', async () => {
    let version = 1
    const remote = provider('remote', () => [fn(`agent_tool_v${version}`)])
    const root = await rootWith((ctx, seams) => {
      ctx.plugin(definePlugin({ name: 'maps', setup: (child) => void child.addTool('route', feature()) }))
      seams.registerToolService('root/agents', remote.service)
    })
    const as = async (owner: string) => {
      const turn = await root.beginTurn({ session: 's', principal, owner })
      await turn.end()
      return turn.capabilities.tools.map((t) => t.name)
    }
    expect(await as('root/maps')).toContain('maps__route')
    // The provider changes without telling anyone: the generation keeps what it projected.
    version = 2
    expect(await as('root/agents')).toEqual(['agent_tool_v1'])
    expect(remote.schema).toHaveBeenCalledTimes(1)
    for (const owner of ['root/unknown', 'root/maps/deeper']) {
      const error = await root.beginTurn({ session: 's', principal, owner }).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'INVALID_TURN', message: expect.stringContaining(`owner "${owner}" is not a plugin of generation 1`) })
    }
    // A refused turn holds no lease: the generation is disposed once it is replaced.
    const first = root.activeGeneration
    await root.reload()
    await first.whenDisposed
  })

  it('drops a remote tool whose restrictions have the wrong type, instead of lifting them', async () => {
    const root = await rootWith(
      (_ctx, seams) => {
        seams.registerToolService(
          'global',
          provider('remote', () => [
            fn('open_tool'),
            fn('admin_only', { permissions: 'admin' as never }),
            fn('discord_only', { platforms: 'discord' as never }),
            fn('secret', { hidden: 'true' as never }),
          ]).service,
        )
      },
      { check: () => false },
    )
    const { names } = await turnNames(root)
    expect(names).toEqual(['open_tool'])
  })
})

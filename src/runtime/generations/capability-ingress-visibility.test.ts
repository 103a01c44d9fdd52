import { describe, expect, it, vi } from 'vitest'
import type { PermissionHost } from '../../seams/approval.js'
import { toolsByName } from './tool-binding.js'
import { feature, generationOf, grantAll, names, schema, service, type Setup, turnWith } from './fixtures/capability-ingress-kit.js'

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

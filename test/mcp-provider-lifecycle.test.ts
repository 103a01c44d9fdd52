import { describe, expect, it } from 'vitest'
import {
  capabilitySeamToken,
  definePlugin,
  McpToolService,
  type McpToolServiceOptions,
  type PluginContext,
  SeamIntegration,
} from 'seam-runtime'
import type { GenerationEvent } from '../src/runtime/generations/instrumentation.js'
import type { ProviderStatus } from '../src/seams/types.js'
import { fixtureTransport, waitFor } from '../src/mcp/fixtures/test-helpers.js'
import { beginTurn, rootWith } from './kit.js'

const FAST_RETRY = { initialDelayMs: 50, maxDelayMs: 200 }

/** Registers a service and nothing else: no `connect()`, as a host that forgot it would. */
function register(ctx: PluginContext, options: McpToolServiceOptions): McpToolService {
  const service = new McpToolService(options)
  ctx.effect(() => service.dispose(), `mcp ${service.id}`)
  const seams = new SeamIntegration()
  seams.registerToolService('global', service)
  ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
  return service
}

const allowAll = { request: async () => 'allowed-once' as const }

describe('a mounted MCP server cannot be forgotten', () => {
  it('connects when the first generation needs its tools, without connect()', async () => {
    let service!: McpToolService
    const { root } = await rootWith((ctx) => {
      service = register(ctx, { id: 'fixture', transport: fixtureTransport() })
    })
    expect(service.status).toBe('connected')
    expect((await root.capabilities()).tools.map((t) => t.name)).toContain('echo')
    expect(root.providers()).toEqual([{ provider: 'fixture', state: 'connected', reason: expect.any(String) }])
  })

  it('shows a server that cannot start: a diagnostic, its status with the reason and the next retry', async () => {
    const { root } = await rootWith((ctx) => {
      register(ctx, { id: 'missing', transport: { command: '/nonexistent/mcp-server' }, reconnect: { initialDelayMs: 60_000 } })
    })
    expect((await root.capabilities()).tools).toEqual([])
    expect(root.activeGeneration.diagnostics).toEqual([
      expect.objectContaining({ code: 'PROVIDER_UNAVAILABLE', source: 'seam:missing', message: expect.stringMatching(/ENOENT/) }),
    ])
    const [status] = root.providers()
    expect(status).toMatchObject({ provider: 'missing', state: 'down', reason: expect.stringMatching(/connecting failed: .*ENOENT/) })
    expect(status!.retryAt! - Date.now()).toBeGreaterThan(50_000)
  })

  it('reports a diagnostic once, though every owner projects the provider', async () => {
    const { root } = await rootWith((ctx) => {
      register(ctx, { id: 'missing', transport: { command: '/nonexistent/mcp-server' }, reconnect: { initialDelayMs: 60_000 } })
      ctx.plugin(definePlugin({ name: 'child' }))
    })
    expect(root.activeGeneration.owners.size).toBe(2)
    expect(root.activeGeneration.diagnostics.filter((d) => d.source === 'seam:missing')).toHaveLength(1)
  })

  it('emits provider events as the server goes down and comes back, and a call that reaches it while down is PROVIDER_UNAVAILABLE', async () => {
    let service!: McpToolService
    const { root } = await rootWith(
      (ctx) => {
        service = register(ctx, { id: 'fixture', transport: fixtureTransport(), reconnect: FAST_RETRY })
      },
      { approval: allowAll },
    )
    const events: ProviderStatus[] = []
    root.on('provider', (status) => events.push(status))
    const turn = await beginTurn(root)
    // The crash tool exits the server; the turn keeps the generation that still lists `echo`.
    await turn.tools.execute({ callId: 'c1', name: 'crash', arguments: '{}' })
    await waitFor('down', () => events.some((e) => e.state === 'down'))
    const whileDown = await turn.tools.execute({ callId: 'c2', name: 'echo', arguments: '{"text":"x"}' })
    expect(whileDown).toMatchObject({ status: 'failed', code: 'PROVIDER_UNAVAILABLE' })
    await turn.end()
    await waitFor('back', () => events.at(-1)?.state === 'connected', 5_000)
    expect(events.find((e) => e.state === 'down')).toMatchObject({ provider: 'fixture', reason: expect.stringMatching(/connection lost/) })
    expect(service.status).toBe('connected')
  })
})

describe('generations from provider changes', () => {
  it('publishes nothing when a list_changed leaves the catalog as it was, and one generation when it changes', async () => {
    const { root } = await rootWith((ctx) => void register(ctx, { id: 'fixture', transport: fixtureTransport() }), { approval: allowAll })
    const published: GenerationEvent[] = []
    root.on('generation', (event) => published.push(event))
    const turn = await beginTurn(root)
    // A duplicate name is dropped by the client: the server announces a change that changes nothing.
    await turn.tools.execute({ callId: 'c1', name: 'add_tool', arguments: '{"name":"echo"}' })
    await turn.tools.execute({ callId: 'c2', name: 'add_tool', arguments: '{"name":"fresh_tool"}' })
    await turn.end()
    await waitFor('a publish', () => published.length > 0)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(published.map((e) => e.diff.tools)).toEqual([{ added: ['fresh_tool'], changed: [], removed: [] }])
  })

  it('publishes exactly one generation when the server is lost and one when it is back, none empty', async () => {
    let service!: McpToolService
    const { root } = await rootWith(
      (ctx) => {
        service = register(ctx, { id: 'fixture', transport: fixtureTransport(), reconnect: FAST_RETRY })
      },
      { approval: allowAll },
    )
    const published: GenerationEvent[] = []
    root.on('generation', (event) => published.push(event))
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'crash', arguments: '{}' })
    await turn.end()
    await waitFor('the tools back', () => published.length >= 2 && service.status === 'connected', 5_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(published).toHaveLength(2)
    expect(published[0]!.diff.tools.removed).toContain('echo')
    expect(published[1]!.diff.tools.added).toContain('echo')
  })
})

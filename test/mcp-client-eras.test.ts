import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { createMcpHandler } from '@modelcontextprotocol/server'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, McpToolService, type Root } from '../src/index.js'
import { createFixtureServer, createFixtureState } from '../src/mcp/fixtures/fixture-server.js'
import { startHttpFixture } from '../src/mcp/fixtures/http-server.js'
import { LOOKUP_V2, type ServePlugin, servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'
import { contextWith, fixtureTransport } from '../src/mcp/fixtures/test-helpers.js'
import { serveHttp } from '../src/mcp/server/serve.js'

const signal = new AbortController().signal

/** The fixture server behind the SDK's own `createMcpHandler` (2026-07-28 statelessly, 2025 as its stateless fallback), on node:http. */
async function sdkHandlerFixture(): Promise<string> {
  const state = createFixtureState()
  const handler = createMcpHandler(() => createFixtureServer(state))
  const http = createServer(async (req, res) => {
    const body = req.method === 'POST' ? (Readable.toWeb(req) as ReadableStream) : undefined
    const headers = new Headers(Object.entries(req.headers).map(([key, value]) => [key, String(value)]))
    const request = new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), { method: req.method, headers, body, duplex: 'half' } as RequestInit)
    const response = await handler.fetch(request)
    res.writeHead(response.status, Object.fromEntries(response.headers))
    if (response.body) Readable.fromWeb(response.body as NodeReadableStream).pipe(res)
    else res.end()
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  onTestFinished(async () => {
    await handler.close()
    http.closeAllConnections()
    await new Promise((resolve) => http.close(resolve))
  })
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`
}

async function connected(service: McpToolService): Promise<McpToolService> {
  onTestFinished(() => service.dispose())
  await service.connect()
  return service
}

/** McpToolService negotiates the newest revision a server speaks, and falls back to 2025-11-25. */
describe('McpToolService in both protocol eras', () => {
  it('speaks 2026-07-28 to a stdio server that serves both eras, and hears its changes on subscriptions/listen', async () => {
    const service = await connected(new McpToolService({ id: 'eras', transport: fixtureTransport(undefined, { eras: true }) }))
    expect(service.protocolVersion).toBe('2026-07-28')
    expect(await service.execute('global', 'echo', { text: 'modern' }, contextWith(signal))).toEqual({
      success: true,
      content: [{ type: 'text', text: 'echo: modern' }],
    })
    let changes = 0
    service.onDidChange(() => {
      changes++
    })
    await service.execute('global', 'add_tool', { name: 'grown' }, contextWith(signal))
    await until('the change to be heard', () => changes > 0, 10_000)
    expect((await service.schema('global')).map((schema) => schema.function.name)).toContain('grown')
  })

  it('falls back to 2025-11-25 with a stdio server that speaks only that', async () => {
    const service = await connected(new McpToolService({ id: 'legacy', transport: fixtureTransport() }))
    expect(service.protocolVersion).toBe('2025-11-25')
    expect(await service.execute('global', 'echo', { text: 'legacy' }, contextWith(signal))).toMatchObject({ success: true })
  })

  it('speaks a pinned revision without probing, and refuses an unknown one', async () => {
    const pinned = await connected(new McpToolService({ id: 'pinned', transport: fixtureTransport(undefined, { eras: true }), protocol: '2025-11-25' }))
    expect(pinned.protocolVersion).toBe('2025-11-25')
    expect(() => new McpToolService({ id: 'odd', transport: fixtureTransport(), protocol: '2024-01-01' as never })).toThrow(/protocol must be one of/)
  })

  it("speaks 2026-07-28 over HTTP to the SDK's own two-era handler", async () => {
    const service = await connected(new McpToolService({ id: 'sdk-http', transport: { url: await sdkHandlerFixture() } }))
    expect(service.protocolVersion).toBe('2026-07-28')
    expect(await service.execute('global', 'echo', { text: 'stateless' }, contextWith(signal))).toEqual({
      success: true,
      content: [{ type: 'text', text: 'echo: stateless' }],
    })
  })

  it('falls back to 2025-11-25 with a sessionful HTTP server', async () => {
    const fixture = await startHttpFixture()
    onTestFinished(() => fixture.close())
    const service = await connected(new McpToolService({ id: 'legacy-http', transport: { url: fixture.url } }))
    expect(service.protocolVersion).toBe('2025-11-25')
    expect(await service.execute('global', 'echo', { text: 'legacy' }, contextWith(signal))).toMatchObject({ success: true })
  })

  describe('against seam dev over HTTP (both eras)', () => {
    let plugin: ServePlugin
    let root: Root
    let server: { url: string; close(): Promise<void> }

    beforeAll(async () => {
      plugin = await servePlugin()
      root = await createRoot({ dir: plugin.dir, watch: true })
      server = await serveHttp(root, { port: 0 })
    })
    afterAll(async () => {
      await server.close()
      await root.close()
      await plugin.remove()
    })

    it('speaks 2026-07-28 without a session, calls, and hears a catalog change', async () => {
      const service = await connected(new McpToolService({ id: 'dev', transport: { url: server.url } }))
      expect(service.protocolVersion).toBe('2026-07-28')
      expect(await service.execute('global', 'lookup', { id: 4 }, contextWith(signal))).toMatchObject({
        success: true,
        output: { id: 4, title: 'Printer on fire', status: 'open' },
      })
      let changes = 0
      service.onDidChange(() => {
        changes++
      })
      await plugin.put('tools/lookup.ts', LOOKUP_V2)
      await until('the change to be heard', () => changes > 0, 10_000)
      const lookup = (await service.schema('global')).find((schema) => schema.function.name === 'lookup')!
      expect(Object.keys((lookup.function.parameters as { properties: object }).properties)).toEqual(['id', 'verbose'])
    })
  })
})

import { Client } from '@modelcontextprotocol/client'
import { InMemoryTransport } from '@modelcontextprotocol/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { capabilitySeamToken, createRoot, definePlugin, defineTool, McpToolService, memoryJournal, type Root, SeamIntegration } from '../src/index.js'
import { fixtureTransport } from '../src/mcp/fixtures/test-helpers.js'
import { McpBridge } from '../src/mcp/server/serve-bridge.js'

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
const META = { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01`, tracestate: 'vendor=opaque' }

/**
 * The W3C trace context a served request carries in `_meta` reaches the call (a tool's `ctx.trace`)
 * and a mounted MCP server, with no OpenTelemetry SDK in the process (no context manager carries
 * the active span across awaits).
 */
describe('trace context of a served request, without an OpenTelemetry SDK', () => {
  let root: Root
  let bridge: McpBridge
  let client: Client

  beforeAll(async () => {
    root = await createRoot({
      journal: memoryJournal(),
      log: () => {},
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.addTool(
            'where',
            defineTool({ description: 'Tell the trace context.', input: z.object({}), approval: 'never', execute: (_args, tool) => ({ trace: tool.trace ?? null }) }),
          )
          const seams = new SeamIntegration()
          seams.registerToolService('global', new McpToolService({ id: 'fixture', transport: fixtureTransport(), protocol: '2025-11-25', approval: 'never' }))
          ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
        },
      }),
    })
    bridge = new McpBridge(root)
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await bridge.open('trace').connect(serverSide)
    client = new Client({ name: 'trace-test', version: '1.0.0' })
    await client.connect(clientSide)
  })
  afterAll(async () => {
    await client?.close()
    await bridge?.close()
    await root?.close()
  })

  it("gives a tool body the request's traceparent and tracestate", async () => {
    const result = await client.callTool({ name: 'where', arguments: {}, _meta: META })
    expect(result.structuredContent).toEqual({ trace: META })
    const plain = await client.callTool({ name: 'where', arguments: {} })
    expect(plain.structuredContent).toEqual({ trace: null })
  })

  it('ignores a malformed traceparent', async () => {
    const result = await client.callTool({ name: 'where', arguments: {}, _meta: { traceparent: 'not-a-trace' } })
    expect(result.structuredContent).toEqual({ trace: null })
  })

  it('forwards it to a mounted MCP server in the same trace', async () => {
    const result = await client.callTool({ name: 'stats', arguments: {}, _meta: META })
    const meta = (result.structuredContent as { meta: { traceparent?: string; tracestate?: string } }).meta
    expect(meta.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`))
    expect(meta.tracestate).toBe(META.tracestate)
  })
})

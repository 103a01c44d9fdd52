import { context, metrics, propagation, SpanKind, trace } from '@opentelemetry/api'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  capabilitySeamToken,
  createRoot,
  definePlugin,
  defineTool,
  McpToolService,
  memoryJournal,
  openTelemetry,
  type Root,
  SeamIntegration,
} from 'seam-runtime'
import { serveHttp } from '../src/mcp/server/serve.js'
import { beginTurn } from './kit.js'
import { CollectingReader, parentOf, pointsOf } from './telemetry-kit.js'

/**
 * One trace across two roots in this process: the host root calls a tool of a mounted MCP server
 * (`McpToolService`), which is another root served over streamable HTTP. The SDK is registered
 * globally (tracer provider and async context), as a host process would.
 */
describe('a trace crossing McpToolService → a seam-runtime MCP server → back', () => {
  const exporter = new InMemorySpanExporter()
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new CollectingReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  let origin: Root
  let server: Awaited<ReturnType<typeof serveHttp>>
  let host: Root

  beforeAll(async () => {
    provider.register()
    metrics.setGlobalMeterProvider(meterProvider)
    const served = definePlugin({
      name: 'served',
      setup(ctx) {
        ctx.addTool('lookup', defineTool({ description: 'Look a ticket up.', input: z.object({ id: z.number() }), approval: 'never', execute: ({ id }) => ({ id, title: 'Printer on fire' }) }))
      },
    })
    origin = await createRoot({ plugin: served, journal: memoryJournal(), telemetry: openTelemetry() })
    server = await serveHttp(origin, { port: 0 })
    host = await createRoot({
      journal: memoryJournal(),
      telemetry: openTelemetry(),
      approval: { request: async () => 'allowed-once' },
      plugin: definePlugin({
        name: 'host',
        async setup(ctx) {
          const mounted = new McpToolService({ id: 'origin', transport: { url: server.url } })
          ctx.effect(() => mounted.dispose(), 'mcp origin')
          const seams = new SeamIntegration()
          seams.registerToolService('global', mounted)
          ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
          await mounted.connect()
        },
      }),
    })
  })

  afterAll(async () => {
    await host?.close()
    await server?.close()
    await origin?.close()
    await provider.shutdown()
    await meterProvider.shutdown()
    metrics.disable()
    trace.disable()
    context.disable()
    propagation.disable()
  })

  it('keeps one trace id from the host turn to the served call and back, each span a child of the one before', async () => {
    const turn = await beginTurn(host)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'lookup', arguments: '{"id":7}' })
    await turn.end()
    expect(outcome).toMatchObject({ status: 'completed', value: { id: 7, title: 'Printer on fire' } })
    const spans = exporter.getFinishedSpans()
    const hostCall = spans.find((s) => s.name === 'execute_tool lookup' && s.attributes['gen_ai.tool.call.id'] === 'c1')!
    const client = spans.find((s) => s.name === 'tools/call lookup' && s.kind === SpanKind.CLIENT)!
    const served = spans.find((s) => s.name === 'tools/call lookup' && s.kind === SpanKind.SERVER)!
    const originCall = spans.find((s) => s.name === 'execute_tool lookup' && s !== hostCall)!
    for (const span of [hostCall, client, served, originCall]) expect(span, 'a span is missing').toBeDefined()
    expect(new Set([hostCall, client, served, originCall].map((s) => s.spanContext().traceId)).size).toBe(1)
    expect(parentOf(client)).toBe(hostCall.spanContext().spanId)
    expect(parentOf(served)).toBe(client.spanContext().spanId)
    expect(parentOf(originCall)).toBe(served.spanContext().spanId)
    expect(hostCall.attributes).toMatchObject({ 'gen_ai.tool.type': 'extension', 'seam.source': 'mcp:origin', 'seam.outcome.status': 'completed' })
    expect(client.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'lookup', 'seam.provider': 'origin' })
    expect(served.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'seam.outcome.status': 'completed' })
    // The client's span ended after the server's: the answer came back on the same trace.
    const end = (s: typeof client) => s.endTime[0] * 1e9 + s.endTime[1]
    expect(end(client)).toBeGreaterThanOrEqual(end(served))
  })

  it('reports the mounted provider as connected', async () => {
    const points = await pointsOf<number>(reader, 'seam.mcp.provider.status')
    expect(points).toEqual([{ attributes: { 'seam.provider': 'origin', 'seam.provider.status': 'connected' }, value: 1 }])
  })
})

/**
 * Issue 7: `tools/call` per second over the SDK's in-memory transport, an SDK client calling our
 * server (every call a turn through the whole pipeline, memory journal) against a bare `McpServer`
 * with the same zod tool and the same result (text + structuredContent). Sequential calls, so the
 * figure is per-call latency. Target: our server at least 0.8× the bare server's rate, i.e. at most
 * 1.25× its time per call. `node --import tsx bench/mcp.ts`
 */
import { Client } from '@modelcontextprotocol/client'
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { createRoot, definePlugin, defineTool, memoryJournal } from '../src/index.js'
import { McpBridge } from '../src/seams/mcp/serve-bridge.js'
import {
  type BenchReport,
  type Contender,
  formatMs,
  formatRate,
  formatRatio,
  interleave,
  isMain,
  type Measured,
  msPerOp,
  pairedRatio,
  printReport,
  type Sample,
  table,
  timeLoop,
  verdict,
} from './harness.js'

const CALLS_PER_ROUND = 1_000
const ROUNDS = 12
const WARMUP = 3
/** 0.8× the rate is 1.25× the time per call. */
const TARGET_RATE = 0.8

const NAME = 'lookup_ticket'
const DESCRIPTION = 'Look up a ticket.'
const ARGUMENTS = { id: 'T-1', limit: 3 }
const input = z.object({ id: z.string(), limit: z.number().int().max(10).optional() })

/** The work both servers share: the tool body itself. */
async function lookupBody(args: { id: string }): Promise<{ id: string; title: string }> {
  return { id: args.id, title: 'Printer on fire' }
}

const plugin = definePlugin({
  name: 'bench',
  setup(ctx) {
    ctx.addTool(NAME, defineTool({ description: DESCRIPTION, input, approval: 'never', annotations: { readOnlyHint: true }, execute: lookupBody }))
  },
})

interface Endpoint {
  client: Client
  close(): Promise<void>
}

async function connect(serve: (transport: InMemoryTransport) => Promise<() => Promise<void>>): Promise<Endpoint> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const closeServer = await serve(serverSide)
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(clientSide)
  await client.listTools()
  return {
    client,
    async close() {
      await client.close()
      await closeServer()
    },
  }
}

/** Ours: a fresh root (memory journal) and MCP session per round, set up untimed. */
function seamServer(): Promise<Endpoint> {
  return connect(async (transport) => {
    const root = await createRoot({ plugin, journal: memoryJournal() })
    const bridge = new McpBridge(root)
    await bridge.open('bench').connect(transport)
    return async () => {
      await bridge.close()
      await root.close()
    }
  })
}

/** The baseline: the SDK's own high-level server, validating the same zod schema. */
function bareServer(): Promise<Endpoint> {
  return connect(async (transport) => {
    const server = new McpServer({ name: 'bare', version: '1.0.0' })
    server.registerTool(NAME, { description: DESCRIPTION, inputSchema: input, annotations: { readOnlyHint: true } }, async (args) => {
      const value = await lookupBody(args)
      return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value }
    })
    await server.connect(transport)
    return () => server.close()
  })
}

/**
 * Where the difference goes: the same calls straight into one turn's pipeline, without MCP, the way
 * the server runs them (object arguments, a signal of the call's own, as the SDK hands each request).
 */
async function pipelineRound(): Promise<Sample> {
  const root = await createRoot({ plugin, journal: memoryJournal() })
  try {
    const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' }, unattended: true })
    const sample = await timeLoop(CALLS_PER_ROUND, async (index) => {
      const signal = new AbortController().signal
      const outcome = await turn.tools.execute({ callId: `c${index}`, name: NAME, arguments: ARGUMENTS }, { signal })
      if (outcome.status !== 'completed') throw new Error(`bench call failed: ${outcome.code}`)
    })
    await turn.end()
    return sample
  } finally {
    await root.close()
  }
}

function round(open: () => Promise<Endpoint>): () => Promise<Sample> {
  return async () => {
    const endpoint = await open()
    try {
      return await timeLoop(CALLS_PER_ROUND, async () => {
        const result = await endpoint.client.callTool({ name: NAME, arguments: ARGUMENTS })
        if (result.isError) throw new Error(`bench call failed: ${JSON.stringify(result.content)}`)
      })
    } finally {
      await endpoint.close()
    }
  }
}

export async function run(): Promise<BenchReport> {
  const contenders: Contender[] = [
    { label: 'bare McpServer (zod tool)', round: round(bareServer) },
    { label: 'seam server (full pipeline, memory journal)', round: round(seamServer) },
    { label: '  of which: the pipeline alone, no MCP', round: pipelineRound },
  ]
  const [bare, seam, pipeline] = (await interleave(contenders, { rounds: ROUNDS, warmup: WARMUP })) as [Measured, Measured, Measured]
  const timeRatio = pairedRatio(seam, bare)
  const row = (m: Measured, ratio: string) => [m.label, formatRate(1000 / msPerOp(m)), formatMs(msPerOp(m)), ratio]
  return {
    name: 'mcp',
    lines: [
      `mcp: sequential tools/call over InMemoryTransport; ${ROUNDS} interleaved rounds of ${CALLS_PER_ROUND.toLocaleString('en-US')} calls, medians`,
      ...table(['', 'calls/s', 'per call', 'rate'], [row(bare, '1.00×'), row(seam, formatRatio(1 / timeRatio)), row(pipeline, '')]),
    ],
    verdicts: [verdict(`seam server time per call vs bare (rate ${formatRatio(1 / timeRatio)}, target ≥ ${TARGET_RATE}×)`, seam, bare, 1 / TARGET_RATE)],
  }
}

if (isMain(import.meta.url)) printReport(await run())

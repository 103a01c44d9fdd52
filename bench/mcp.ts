/**
 * Issue 7: `tools/call` per second, an SDK client calling our server (every call a turn's call
 * through the whole pipeline, memory journal) against a bare `McpServer` with the same zod tool and
 * the same result (text + structuredContent), over two transports, each pair in one run:
 * - stdio: each server a child process, as `seam mcp` is deployed (one connection per server,
 *   reused by every round), in both protocol eras: 2025-11-25 (the bare server hand-wired to its
 *   transport) and 2026-07-28 (the bare server behind the SDK's own two-era `serveStdio`, the
 *   client pinned to 2026-07-28, every request carrying its envelope);
 * - in-memory: both servers in this process over the SDK's `InMemoryTransport`, so the transport
 *   costs nothing and the ratio is the server's own overhead at its most exposed.
 * Sequential calls, so the figures are per-call latency. Target: our server at least 0.8× the bare
 * server's rate (at most 1.25× its time per call) over stdio in each era and in memory; all are
 * printed. `npm run bench -- mcp`
 */
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { InMemoryTransport } from '@modelcontextprotocol/server'
import { createRoot, memoryJournal } from '../src/index.js'
import { McpBridge } from '../src/mcp/server/serve-bridge.js'
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
import { ARGUMENTS, bareServer, NAME, plugin } from './mcp-tool.js'

const CALLS_PER_ROUND = 1_000
const ROUNDS = 12
const WARMUP = 3
/** 0.8× the rate is 1.25× the time per call. */
const TARGET_RATE = 0.8
const CHILD = fileURLToPath(new URL('./mcp-stdio-server.ts', import.meta.url))

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

/** Ours in memory: a fresh root (memory journal) and MCP session per round, set up untimed. */
function seamInMemory(): Promise<Endpoint> {
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

function bareInMemory(): Promise<Endpoint> {
  return connect(async (transport) => {
    const server = bareServer()
    await server.connect(transport)
    return () => server.close()
  })
}

type Era = '2025-11-25' | '2026-07-28'

/** A server in a child process over stdio, started on first use and kept for every round. */
function stdioServer(which: 'bare' | 'seam', era: Era): { open: () => Promise<Endpoint>; stop: () => Promise<void> } {
  let started: Promise<Client> | undefined
  const start = async () => {
    const modern = era === '2026-07-28'
    const child = which === 'bare' && modern ? 'bare-eras' : which
    const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', CHILD, child], stderr: 'inherit' })
    const client = new Client({ name: 'bench', version: '1.0.0' }, modern ? { versionNegotiation: { mode: { pin: era } } } : {})
    await client.connect(transport)
    if (client.getNegotiatedProtocolVersion() !== era) throw new Error(`${which} over stdio speaks ${client.getNegotiatedProtocolVersion()}, not ${era}`)
    await client.listTools()
    return client
  }
  return {
    async open() {
      started ??= start()
      return { client: await started, close: async () => {} }
    },
    async stop() {
      if (started) await (await started).close()
    },
  }
}

/** Where the difference goes: the same calls straight into one turn's pipeline, the way the server runs them. */
async function pipelineRound(): Promise<Sample> {
  const root = await createRoot({ plugin, journal: memoryJournal() })
  try {
    const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' }, unattended: true })
    const sample = await timeLoop(CALLS_PER_ROUND, async (index) => {
      // Object arguments and a signal of the call's own, as the SDK hands each request.
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
  const children = {
    bare2025: stdioServer('bare', '2025-11-25'),
    seam2025: stdioServer('seam', '2025-11-25'),
    bare2026: stdioServer('bare', '2026-07-28'),
    seam2026: stdioServer('seam', '2026-07-28'),
  }
  let measured: Measured[]
  try {
    const stdio2025: Contender[] = [
      { label: 'stdio 2025-11-25: bare McpServer (zod tool)', round: round(children.bare2025.open) },
      { label: 'stdio 2025-11-25: seam server (full pipeline, memory journal)', round: round(children.seam2025.open) },
    ]
    const stdio2026: Contender[] = [
      { label: 'stdio 2026-07-28: bare McpServer (zod tool)', round: round(children.bare2026.open) },
      { label: 'stdio 2026-07-28: seam server (full pipeline, memory journal)', round: round(children.seam2026.open) },
    ]
    const memory: Contender[] = [
      { label: 'in-memory: bare McpServer (zod tool)', round: round(bareInMemory) },
      { label: 'in-memory: seam server (full pipeline, memory journal)', round: round(seamInMemory) },
      { label: '  of which: the pipeline alone, no MCP', round: pipelineRound },
    ]
    const options = { rounds: ROUNDS, warmup: WARMUP }
    measured = [...(await interleave(stdio2025, options)), ...(await interleave(stdio2026, options)), ...(await interleave(memory, options))]
  } finally {
    await Promise.allSettled(Object.values(children).map((child) => child.stop()))
  }
  const [bare2025, seam2025, bare2026, seam2026, memoryBare, memorySeam, pipeline] = measured as [Measured, Measured, Measured, Measured, Measured, Measured, Measured]
  const row = (m: Measured, rate: string) => [m.label, formatRate(1000 / msPerOp(m)), formatMs(msPerOp(m)), rate]
  const rate = (m: Measured, base: Measured) => formatRatio(1 / pairedRatio(m, base))
  const target = (transport: string, seam: Measured, bare: Measured) =>
    verdict(`${transport}: seam server time per call vs bare (rate ${rate(seam, bare)}, target ≥ ${TARGET_RATE}×)`, seam, bare, 1 / TARGET_RATE)
  return {
    name: 'mcp',
    lines: [
      `mcp: sequential tools/call; ${ROUNDS} interleaved rounds of ${CALLS_PER_ROUND.toLocaleString('en-US')} calls per transport, medians`,
      ...table(
        ['', 'calls/s', 'per call', 'rate'],
        [
          row(bare2025, '1.00×'),
          row(seam2025, rate(seam2025, bare2025)),
          row(bare2026, '1.00×'),
          row(seam2026, rate(seam2026, bare2026)),
          row(memoryBare, '1.00×'),
          row(memorySeam, rate(memorySeam, memoryBare)),
          row(pipeline, ''),
        ],
      ),
    ],
    verdicts: [target('stdio 2025-11-25', seam2025, bare2025), target('stdio 2026-07-28', seam2026, bare2026), target('in-memory', memorySeam, memoryBare)],
  }
}

if (isMain(import.meta.url)) printReport(await run())

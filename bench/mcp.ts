/**
 * Issue 7: `tools/call` per second, an SDK client calling our server (every call a turn's call
 * through the whole pipeline, memory journal) against a bare `McpServer` with the same zod tool and
 * the same result (text + structuredContent), over two transports, each pair in one run:
 * - stdio: each server a child process, as `seam mcp` is deployed (one connection per server,
 *   reused by every round);
 * - in-memory: both servers in this process over the SDK's `InMemoryTransport`, so the transport
 *   costs nothing and the ratio is the server's own overhead at its most exposed.
 * Sequential calls, so the figures are per-call latency. Target: our server at least 0.8× the bare
 * server's rate (at most 1.25× its time per call) over stdio or in memory, as the issue allows; both
 * are printed. `node --import tsx bench/mcp.ts`
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

/** A server in a child process over stdio, started on first use and kept for every round. */
function stdioServer(which: 'bare' | 'seam'): { open: () => Promise<Endpoint>; stop: () => Promise<void> } {
  let started: Promise<Client> | undefined
  const start = async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', CHILD, which], stderr: 'inherit' })
    const client = new Client({ name: 'bench', version: '1.0.0' })
    await client.connect(transport)
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
  const bareStdio = stdioServer('bare')
  const seamStdio = stdioServer('seam')
  let measured: Measured[]
  try {
    const stdio: Contender[] = [
      { label: 'stdio: bare McpServer (zod tool)', round: round(bareStdio.open) },
      { label: 'stdio: seam server (full pipeline, memory journal)', round: round(seamStdio.open) },
    ]
    const memory: Contender[] = [
      { label: 'in-memory: bare McpServer (zod tool)', round: round(bareInMemory) },
      { label: 'in-memory: seam server (full pipeline, memory journal)', round: round(seamInMemory) },
      { label: '  of which: the pipeline alone, no MCP', round: pipelineRound },
    ]
    measured = [...(await interleave(stdio, { rounds: ROUNDS, warmup: WARMUP })), ...(await interleave(memory, { rounds: ROUNDS, warmup: WARMUP }))]
  } finally {
    await Promise.allSettled([bareStdio.stop(), seamStdio.stop()])
  }
  const [stdioBare, stdioSeam, memoryBare, memorySeam, pipeline] = measured as [Measured, Measured, Measured, Measured, Measured]
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
        [row(stdioBare, '1.00×'), row(stdioSeam, rate(stdioSeam, stdioBare)), row(memoryBare, '1.00×'), row(memorySeam, rate(memorySeam, memoryBare)), row(pipeline, '')],
      ),
    ],
    verdicts: [target('stdio', stdioSeam, stdioBare), target('in-memory', memorySeam, memoryBare)],
  }
}

if (isMain(import.meta.url)) printReport(await run())

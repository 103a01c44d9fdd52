import { type ChildProcess, spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServePlugin, servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'
import { BIN } from './cli-kit.js'

/** A stand-in OTLP/HTTP collector on a loopback port: it keeps what each path received. */
async function collector(): Promise<{ url: string; received: Map<string, string[]>; close(): Promise<void> }> {
  const received = new Map<string, string[]>()
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const list = received.get(request.url ?? '') ?? []
      list.push(Buffer.concat(chunks).toString('utf8'))
      received.set(request.url ?? '', list)
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, received, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

describe('seam dev --otel', () => {
  let plugin: ServePlugin
  let otlp: Awaited<ReturnType<typeof collector>>
  let dev: ChildProcess
  let stdout = ''

  beforeAll(async () => {
    plugin = await servePlugin()
    otlp = await collector()
    const env = { ...process.env, NO_COLOR: '1', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: 'seam-otel-test' }
    dev = spawn(process.execPath, [BIN, 'dev', plugin.dir, '--port', '0', '--otel', '--no-check'], { stdio: ['ignore', 'pipe', 'pipe'], env })
    dev.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    dev.stderr!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
  }, 40_000)

  afterAll(async () => {
    if (dev && dev.exitCode === null) {
      const exited = new Promise((resolve) => dev.once('exit', resolve))
      dev.kill('SIGINT')
      await exited
    }
    await otlp?.close()
    await plugin?.remove()
  })

  it('exports the spans and metrics of the calls it serves to the OTLP endpoint of the environment', async () => {
    const url = await until('the banner with the MCP URL', () => /mcp\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stdout)?.[1], 30_000)
    // The banner arrives line by line: the otel line may come in a later chunk than the mcp one.
    await until('the otel line of the banner', () => stdout.includes(`otel       ${otlp.url}/v1/traces`) || undefined, 10_000)
    const client = new Client({ name: 'otel-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    const result = await client.callTool({ name: 'lookup', arguments: { id: 7 } })
    expect(result.isError).toBeFalsy()
    await client.close()
    // Ctrl-C: the SDK exports what it buffered before the process exits.
    const exited = new Promise<number | null>((resolve) => dev.once('exit', resolve))
    dev.kill('SIGINT')
    expect(await exited).toBe(0)
    const traces = (otlp.received.get('/v1/traces') ?? []).join('\n')
    expect(traces).toContain('execute_tool lookup')
    expect(traces).toContain('tools/call lookup')
    expect(traces).toContain('seam-otel-test')
    const metrics = (otlp.received.get('/v1/metrics') ?? []).join('\n')
    expect(metrics).toContain('seam.tool.call.duration')
  }, 60_000)
})

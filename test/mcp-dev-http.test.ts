import { type ChildProcess, spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOOKUP_V2, type ServePlugin, servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))
const text = (result: { content: unknown }) => (result.content as { text: string }[]).map((c) => c.text).join('\n')

describe('seam dev: the live generation over MCP streamable HTTP, to a real client', () => {
  let plugin: ServePlugin
  let dev: ChildProcess
  let stdout = ''
  let client: Client

  beforeAll(async () => {
    plugin = await servePlugin()
    dev = spawn(process.execPath, [BIN, 'dev', plugin.dir, '--port', '0', '--debounce', '30', '--no-check'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
    dev.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    dev.stderr!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const url = await until('the banner with the MCP URL', () => /mcp\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stdout)?.[1], 30_000)
    client = new Client({ name: 'dev-http-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  }, 40_000)

  afterAll(async () => {
    await client?.close().catch(() => {})
    if (dev && dev.exitCode === null) {
      const exited = new Promise((resolve) => dev.once('exit', resolve))
      dev.kill('SIGINT')
      await exited
    }
    await plugin?.remove()
  })

  it('lists the tools with their input schemas', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(['load_skill', 'lookup', 'slow', 'wipe'])
    expect(tools.find((t) => t.name === 'lookup')?.annotations?.readOnlyHint).toBe(true)
  })

  it('calls a tool through the pipeline and journal', async () => {
    const result = await client.callTool({ name: 'lookup', arguments: { id: 7 } })
    expect(result.structuredContent).toEqual({ id: 7, title: 'Printer on fire', status: 'open' })
  })

  it('denies a tool that needs approval to a client without elicitation', async () => {
    const result = await client.callTool({ name: 'wipe', arguments: { id: 1 } })
    expect(result.isError).toBe(true)
    expect(text(result)).toMatch(/^\[APPROVAL_UNAVAILABLE\] /)
  })

  it('cancels a running call: the tool sees the abort', async () => {
    const marker = path.join(plugin.scratch, 'http-cancel')
    const controller = new AbortController()
    const call = client.callTool({ name: 'slow', arguments: { ms: 10_000, marker } }, { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('stop')), 300)
    await expect(call).rejects.toThrow()
    expect(await until('the marker file', () => readFile(marker, 'utf8').catch(() => ''))).toMatch(/^aborted: /)
  })

  it('sends list_changed after a tool file edit, then lists the new schema', async () => {
    let changed = 0
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++
    })
    await plugin.put('tools/lookup.ts', LOOKUP_V2)
    await until('list_changed', () => changed > 0, 10_000)
    const lookup = (await client.listTools()).tools.find((t) => t.name === 'lookup')!
    expect(Object.keys(lookup.inputSchema.properties ?? {})).toEqual(['id', 'verbose'])
    expect(stdout).toMatch(/generation 2 live: ~lookup \(\d+(\.\d+)? ms\)/)
  })
})

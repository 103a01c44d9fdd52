import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServePlugin, servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))

describe('seam dev --host 0.0.0.0 --token T: URLs a person can open', () => {
  let plugin: ServePlugin
  let dev: ChildProcess
  let stdout = ''

  beforeAll(async () => {
    plugin = await servePlugin()
    dev = spawn(process.execPath, [BIN, 'dev', plugin.dir, '--host', '0.0.0.0', '--token', 'T0ken', '--port', '0', '--no-check'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    })
    const take = (chunk: Buffer) => {
      stdout += chunk.toString()
    }
    dev.stdout!.on('data', take)
    dev.stderr!.on('data', take)
    await until('the banner', () => /console\s+\S+/.test(stdout) && stdout, 30_000)
  }, 40_000)

  afterAll(async () => {
    if (dev && dev.exitCode === null) {
      const exited = new Promise((resolve) => dev.once('exit', resolve))
      dev.kill('SIGINT')
      await exited
    }
    await plugin?.remove()
  })

  const urls = (label: string) => {
    const line = stdout.split('\n').find((l) => l.trimStart().startsWith(label))!
    return [...line.matchAll(/http:\/\/\S+/g)].map((m) => m[0])
  }

  it('prints the MCP and console URLs with a name that is not 0.0.0.0, loopback last', () => {
    const mcp = urls('mcp')
    const console = urls('console')
    expect(mcp.length).toBeGreaterThanOrEqual(1)
    expect(console).toHaveLength(mcp.length)
    for (const url of [...mcp, ...console]) expect(url).not.toContain('0.0.0.0')
    expect(mcp.at(-1)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(console.at(-1)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?code=/)
  })

  it('opens each console URL as printed: the login is taken, not refused for its Host', async () => {
    for (const url of urls('console')) {
      const res = await fetch(url, { redirect: 'manual' })
      expect(res.status).toBe(303)
      expect(res.headers.get('set-cookie')).toMatch(/^seam_console=/)
    }
  })

  it('serves an MCP client at each printed MCP URL with the token', async () => {
    for (const url of urls('mcp')) {
      const client = new Client({ name: 'dev-hosts', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer T0ken' } } }))
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('lookup')
      await client.close()
    }
  })
})

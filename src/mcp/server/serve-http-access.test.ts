import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { describe, expect, it, onTestFinished } from 'vitest'
import { servedRoot, until } from '../fixtures/serve-plugin.js'
import { connect, text } from '../fixtures/serve-http-client.js'
import { serveHttp } from './serve.js'

describe('serveHttp: who may connect', () => {
  const TOKEN = 'tok-0123456789abcdef'
  const served = servedRoot()

  it('answers 401 to a request without the bearer token, and serves one that carries it', async () => {
    const lines: string[] = []
    const server = await serveHttp(served.root, { port: 0, token: TOKEN, log: (line) => lines.push(line) })
    onTestFinished(() => server.close())
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }
    const post = (headers: Record<string, string>) =>
      fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(initialize) })
    const missing = await post({})
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toBe('Bearer')
    expect((await post({ authorization: 'Bearer wrong-token' })).status).toBe(401)
    expect((await post({ authorization: TOKEN })).status).toBe(401)
    await expect(connect(server.url)).rejects.toThrow()
    const client = await connect(server.url, { token: TOKEN })
    expect((await client.listTools()).tools).toHaveLength(4)
    expect(lines.join('\n')).not.toContain(TOKEN)
  })

  it('refuses a Host header that does not name the server (DNS rebinding)', async () => {
    const server = await serveHttp(served.root, { port: 0 })
    onTestFinished(() => server.close())
    const { port } = new URL(server.url)
    const { request } = await import('node:http')
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { host: `evil.example:${port}`, 'content-type': 'application/json' } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.end('{}')
    })
    expect(status).toBe(403)
    const origin = await fetch(server.url, { method: 'POST', headers: { origin: 'http://evil.example', 'content-type': 'application/json' }, body: '{}' })
    expect(origin.status).toBe(403)
  })

  it('compares the Origin exactly: another port on a loopback name is refused, this server is served', async () => {
    const server = await serveHttp(served.root, { port: 0, allowedOrigins: ['https://console.example.com'] })
    onTestFinished(() => server.close())
    const { port } = new URL(server.url)
    const post = (origin: string) => fetch(server.url, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: '{}' })
    for (const origin of [`http://127.0.0.1:${Number(port) === 9999 ? 9998 : 9999}`, 'http://localhost', `https://127.0.0.1:${port}`, 'null']) {
      expect((await post(origin)).status).toBe(403)
    }
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, 'https://console.example.com']) {
      expect((await post(origin)).status).not.toBe(403)
    }
  })

  it('will not listen beyond loopback without a token', async () => {
    await expect(serveHttp(served.root, { host: '0.0.0.0', port: 0 })).rejects.toMatchObject({ name: 'SeamError', code: 'INVALID_OPTIONS' })
    await expect(serveHttp(served.root, { host: '0.0.0.0', port: 0, token: '  ' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' })
    // A token no Authorization header could carry.
    await expect(serveHttp(served.root, { port: 0, token: 'two words' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('white space') })
  })

  it('listens beyond loopback with a token', async () => {
    const server = await serveHttp(served.root, { host: '0.0.0.0', port: 0, token: TOKEN })
    onTestFinished(() => server.close())
    const local = server.url.replace('0.0.0.0', '127.0.0.1')
    const client = await connect(local, { token: TOKEN })
    expect((await client.listTools()).tools).toHaveLength(4)
  })

  it('reports a taken port as LISTEN_FAILED', async () => {
    const server = await serveHttp(served.root, { port: 0 })
    onTestFinished(() => server.close())
    const port = Number(new URL(server.url).port)
    await expect(serveHttp(served.root, { port })).rejects.toMatchObject({ code: 'LISTEN_FAILED', hint: expect.stringContaining('port') })
  })

  it('expires a session whose client vanished without ending it', async () => {
    const logs: string[] = []
    const server = await serveHttp(served.root, { port: 0, sessionIdleMs: 80, log: (line) => logs.push(line) })
    onTestFinished(() => server.close())
    const transport = new StreamableHTTPClientTransport(new URL(server.url))
    const client = new Client({ name: 'vanishing', version: '1.0.0' })
    await client.connect(transport)
    await client.listTools()
    const sessionId = transport.sessionId!
    // Close the client side only: no DELETE, so the server still holds the session.
    await client.close()
    await until('the session to expire', () => logs.some((line) => line.includes(`session ${sessionId.slice(0, 8)} expired`)), 3_000)
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(response.status).toBe(404)
  })

  it('reclaims the least recently used idle session for a new client past maxSessions', async () => {
    const logs: string[] = []
    const server = await serveHttp(served.root, { port: 0, maxSessions: 2, log: (line) => logs.push(line) })
    onTestFinished(() => server.close())
    const oldest = await connect(server.url)
    const recent = await connect(server.url)
    await oldest.listTools()
    await recent.listTools()
    const fresh = await connect(server.url)
    expect((await fresh.listTools()).tools.length).toBeGreaterThan(0)
    expect((await recent.listTools()).tools.length).toBeGreaterThan(0)
    // The oldest client lost its session: the server no longer knows it.
    await expect(oldest.listTools()).rejects.toThrow(/404|Session not found/)
    expect(logs.some((line) => /reclaimed for a new client/.test(line))).toBe(true)
  })

  it('answers 503 only while every session is busy, and takes a new client once one is idle', async () => {
    const server = await serveHttp(served.root, { port: 0, maxSessions: 1 })
    onTestFinished(() => server.close())
    const busy = await connect(server.url)
    const marker = path.join(served.plugin.scratch, 'busy-marker')
    const running = busy.callTool({ name: 'slow', arguments: { ms: 600, marker } })
    await new Promise((resolve) => setTimeout(resolve, 150))
    const refused = new Client({ name: 'refused', version: '1.0.0' })
    await expect(refused.connect(new StreamableHTTPClientTransport(new URL(server.url)))).rejects.toThrow(/503|busy/)
    expect(text(await running)).toContain('slept 600 ms')
    const next = await connect(server.url)
    expect((await next.listTools()).tools.length).toBeGreaterThan(0)
    await expect(serveHttp(served.root, { port: 0, maxSessions: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' })
  })

  it('still takes a fresh client after 1,000 sessions were opened and abandoned', { timeout: 60_000 }, async () => {
    const server = await serveHttp(served.root, { port: 0 })
    onTestFinished(() => server.close())
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'abandoned', version: '1' } } }
    const abandon = async () => {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(initialize),
      })
      await response.body?.cancel()
      return response.status === 200 && response.headers.get('mcp-session-id') !== null
    }
    // Ten clients at a time, each abandoning the session it just opened.
    let opened = 0
    for (let batch = 0; batch < 100; batch += 1) opened += (await Promise.all(Array.from({ length: 10 }, abandon))).filter(Boolean).length
    expect(opened).toBe(1_000)
    const client = await connect(server.url)
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
  })

  it('keeps a connected client session alive past the idle time while its event stream is open', async () => {
    const server = await serveHttp(served.root, { port: 0, sessionIdleMs: 80 })
    onTestFinished(() => server.close())
    const client = await connect(server.url)
    await client.listTools()
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
  })

  it('close() ends the sessions and the listener, and is idempotent', async () => {
    const server = await serveHttp(served.root, { port: 0 })
    const client = await connect(server.url)
    await client.listTools()
    await Promise.all([server.close(), server.close()])
    await expect(fetch(server.url, { method: 'POST', body: '{}' })).rejects.toThrow()
  })
})

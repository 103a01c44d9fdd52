import { readFile } from 'node:fs/promises'
import { request } from 'node:http'
import path from 'node:path'
import { connect, type Socket } from 'node:net'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { describe, expect, it, onTestFinished } from 'vitest'
import type { JournalEvent } from '../../seams/journal.js'
import { servedRoot, until } from '../fixtures/serve-plugin.js'
import { serveHttp } from './serve.js'

/** A raw request with the given `Host`, answered with its status. */
function statusFor(url: string, host: string, token: string): Promise<number> {
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'GET', headers: { host, authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
      req.destroy()
    })
    req.on('error', reject)
    req.end()
  })
}

/** Opens `n` loopback sockets to `port`, each sending `data` and then nothing more. */
async function stalled(port: number, n: number, data: string): Promise<Socket[]> {
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => {
            if (data) socket.write(data)
            resolve(socket)
          })
          // Flowing, so the socket sees the server's answer and close (a paused one never reads them).
          socket.resume()
          socket.on('error', () => {})
          socket.once('error', reject)
        }),
    ),
  )
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy()
  })
  return sockets
}

async function expectServed(url: string): Promise<void> {
  const client = new Client({ name: 'edges', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  onTestFinished(() => client.close())
  expect((await client.listTools()).tools.length).toBeGreaterThan(0)
}

const openCount = (sockets: readonly Socket[]) => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length

describe('serveHttp at the edges', () => {
  const served = servedRoot()

  it('bound to 0.0.0.0, gives URLs a person can open, serves their hosts, and still refuses a foreign Host', async () => {
    const server = await serveHttp(served.root, { host: '0.0.0.0', port: 0, token: 'T0ken' })
    onTestFinished(() => server.close())
    expect(server.urls.length).toBeGreaterThanOrEqual(1)
    expect(server.urls.at(-1)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(server.url).toBe(server.urls[0])
    for (const url of server.urls) {
      expect(url).not.toContain('0.0.0.0')
      expect(await statusFor(url, new URL(url).host, 'T0ken')).not.toBe(403)
      // A real client opening the URL as printed is served.
      const client = new Client({ name: 'edges', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer T0ken' } } }))
      expect((await client.listTools()).tools.length).toBeGreaterThan(0)
      await client.close()
    }
    const port = new URL(server.url).port
    expect(await statusFor(server.url, `evil.example:${port}`, 'T0ken')).toBe(403)
    expect(await statusFor(server.url, `0.0.0.0:${port}`, 'T0ken')).toBe(403)
  })

  it('closes connections that never finish their headers or body within the bounds', async () => {
    const server = await serveHttp(served.root, { port: 0, headersTimeoutMs: 300, requestTimeoutMs: 600 })
    onTestFinished(() => server.close())
    const port = Number(new URL(server.url).port)
    const silent = await stalled(port, 20, '')
    const headers = await stalled(port, 20, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    const body = await stalled(port, 20, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc"`)
    const started = performance.now()
    await until('the stalled connections to be closed', () => openCount([...silent, ...headers, ...body]) === 0, 5_000)
    expect(performance.now() - started).toBeLessThan(3_000)
    await expectServed(server.url)
  })

  it('closes the connections of a client past its cap at once, and serves it again once it is under', async () => {
    const server = await serveHttp(served.root, { port: 0, maxConnectionsPerClient: 100 })
    onTestFinished(() => server.close())
    const port = Number(new URL(server.url).port)
    const held = await stalled(port, 100, '')
    const over = await stalled(port, 200, '')
    // Well before the 10 s headers timeout: only the cap closes them.
    await until('the connections past the cap to be closed', () => openCount(over) === 0, 3_000)
    expect(openCount(held)).toBe(100)
    for (const socket of held) socket.destroy()
    // The server hears the closes a moment later; until then a new connection is still one too many.
    await until('a new client to be served', () => statusFor(server.url, new URL(server.url).host, '').then((status) => status === 400 || status === 405, () => false))
    await expectServed(server.url)
  })

  it.each([
    ['2025-11-25', {}],
    ['2026-07-28', { versionNegotiation: { mode: { pin: '2026-07-28' as const } } }],
  ])('cancels a %s call whose client aborts it and closes at once: the body stops and the call settles ABORTED, journaled', async (_era, options) => {
    // A 2025-era stream waits streamResumeMs for its client to reconnect; a 2026-07-28 one cancels at once.
    const server = await serveHttp(served.root, { port: 0, streamResumeMs: 300 })
    onTestFinished(() => server.close())
    const client = new Client({ name: 'edges', version: '1.0.0' }, options)
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    const marker = path.join(served.plugin.scratch, `closed-${_era}`)
    const controller = new AbortController()
    const call = client.callTool({ name: 'slow', arguments: { ms: 8_000, marker } }, { signal: controller.signal }).catch((error: unknown) => error)
    const started = await until('the slow call to start', async () =>
      (await served.root.journal.tail(10)).findLast(
        (e): e is Extract<JournalEvent, { kind: 'tool/call' }> => e.kind === 'tool/call' && e.name === 'slow' && JSON.stringify(e).includes(marker),
      ),
    )
    // The cancellation notice the abort sends is cut off by the close: only the closed stream tells.
    controller.abort(new Error('stop'))
    await client.close()
    await call
    const closedAt = performance.now()
    const result = await until('the call to settle', async () => (await served.root.journal.read(started.turnId)).find((e) => e.kind === 'tool/result' && e.callId === started.callId), 5_000)
    expect(result).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(performance.now() - closedAt).toBeLessThan(3_000)
    expect(await readFile(marker, 'utf8')).toMatch(/^aborted: /)
  })

  it('primes a 2025-11-25 POST stream (id, retry); a client that reconnects with Last-Event-ID gets the answer it missed, and the call is not cancelled', async () => {
    const server = await serveHttp(served.root, { port: 0, streamResumeMs: 5_000 })
    onTestFinished(() => server.close())
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const post = (body: unknown, signal?: AbortSignal) => fetch(server.url, { method: 'POST', headers, body: JSON.stringify(body), signal })
    const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'resume', version: '1' } } })
    headers['mcp-session-id'] = init.headers.get('mcp-session-id')!
    headers['mcp-protocol-version'] = '2025-11-25'
    await init.text()
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text()
    const marker = path.join(served.plugin.scratch, 'resumed')
    const controller = new AbortController()
    const response = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 1_000, marker } } }, controller.signal)
    const reader = response.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    // The priming event: an id, the retry to wait, and empty data.
    const primed = /^id: (\S+)\nretry: (\d+)\ndata: \n\n/.exec(first)
    expect(primed?.[2]).toBe('1000')
    controller.abort()
    await reader.cancel().catch(() => {})
    // Until the server hears the close, the stream still has its connection (409): the client retries after `retry`.
    const resume = () => fetch(server.url, { headers: { ...headers, accept: 'text/event-stream', 'last-event-id': primed![1]! } })
    let resumed = await resume()
    for (let tries = 0; resumed.status === 409 && tries < 20; tries += 1) {
      await resumed.text()
      await new Promise((resolve) => setTimeout(resolve, 50))
      resumed = await resume()
    }
    expect(resumed.status).toBe(200)
    const replay = resumed.body!.getReader()
    let text = ''
    while (!text.includes('"id":1')) text += new TextDecoder().decode((await replay.read()).value)
    await replay.cancel()
    expect(text).toContain('slept 1000 ms')
    expect(await readFile(marker, 'utf8').catch(() => 'never aborted')).toBe('never aborted')
  })

  it("cancels a 2025-11-25 session's running call when the client ends the session (DELETE)", async () => {
    const server = await serveHttp(served.root, { port: 0 })
    onTestFinished(() => server.close())
    const transport = new StreamableHTTPClientTransport(new URL(server.url))
    const client = new Client({ name: 'edges', version: '1.0.0' })
    await client.connect(transport)
    const marker = path.join(served.plugin.scratch, 'ended-by-delete')
    // No abort: the call's POST stream stays open until the session ends.
    const call = client.callTool({ name: 'slow', arguments: { ms: 8_000, marker } }).catch((error: unknown) => error)
    const started = await until('the slow call to start', async () =>
      (await served.root.journal.tail(10)).findLast(
        (e): e is Extract<JournalEvent, { kind: 'tool/call' }> => e.kind === 'tool/call' && e.name === 'slow' && JSON.stringify(e).includes(marker),
      ),
    )
    await transport.terminateSession()
    const result = await until('the call to settle', async () => (await served.root.journal.read(started.turnId)).find((e) => e.kind === 'tool/result' && e.callId === started.callId), 5_000)
    expect(result).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(await readFile(marker, 'utf8')).toMatch(/^aborted: /)
    await client.close()
    await call
  })

  it('refuses limits that cannot hold', async () => {
    await expect(serveHttp(served.root, { port: 0, headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' })
    await expect(serveHttp(served.root, { port: 0, maxConnectionsPerClient: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' })
  })
})

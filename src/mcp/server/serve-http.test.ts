import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { Client, type ElicitRequest, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, type Root } from '../../index.js'
import type { JournalEvent } from '../../seams/journal.js'
import { LOOKUP_V2, SKILL, type ServePlugin, servePlugin, until } from '../fixtures/serve-plugin.js'
import { serveHttp } from './serve.js'

type Answer = 'once' | 'session' | 'reject' | 'decline' | 'throw'

/** A real SDK client over streamable HTTP; with `answer`, it declares form elicitation and answers so. */
async function connect(url: string, options: { token?: string; answer?: () => Answer; asked?: ElicitRequest['params'][] } = {}) {
  const client = new Client({ name: 'serve-test', version: '1.0.0' }, options.answer ? { capabilities: { elicitation: { form: {} } } } : {})
  if (options.answer) {
    const answer = options.answer
    client.setRequestHandler('elicitation/create', async (request) => {
      options.asked?.push(request.params)
      const choice = answer()
      if (choice === 'throw') throw new Error('the user interface crashed')
      if (choice === 'decline') return { action: 'decline' }
      return { action: 'accept', content: { decision: choice } }
    })
  }
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {}
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  onTestFinished(() => client.close())
  return client
}

const text = (result: { content: unknown }) => (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n')

describe('serveHttp: the live generation over streamable HTTP', () => {
  let plugin: ServePlugin
  let root: Root
  let server: { url: string; close(): Promise<void> }
  const lines: string[] = []

  beforeAll(async () => {
    plugin = await servePlugin()
    root = await createRoot({ dir: plugin.dir, watch: true })
    server = await serveHttp(root, { port: 0, log: (line) => lines.push(line) })
  })
  afterAll(async () => {
    await server.close()
    await root.close()
    await plugin.remove()
  })

  it('binds loopback on an ephemeral port and lists the tools with object schemas and annotations', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = await connect(server.url)
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(['load_skill', 'lookup', 'slow', 'wipe'])
    const lookup = tools.find((t) => t.name === 'lookup')!
    expect(lookup).toMatchObject({
      description: 'Look a ticket up by id.',
      inputSchema: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
      annotations: { readOnlyHint: true },
    })
    expect(tools.find((t) => t.name === 'wipe')!.annotations).toEqual({ destructiveHint: true })
  })

  it('runs a call through the pipeline and returns its content and structured value', async () => {
    const client = await connect(server.url)
    const result = await client.callTool({ name: 'lookup', arguments: { id: 42 } })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual({ id: 42, title: 'Printer on fire', status: 'open' })
    expect(JSON.parse(text(result))).toEqual({ id: 42, title: 'Printer on fire', status: 'open' })
    const events = await root.journal.tail(20)
    const begin = events.findLast((e) => e.kind === 'turn/begin') as Extract<JournalEvent, { kind: 'turn/begin' }>
    expect(begin).toMatchObject({ subjectId: 'mcp', generation: root.generation, owner: 'root' })
    expect(begin.session).toMatch(/^mcp:[0-9a-f-]{36}$/)
    expect(events.filter((e) => e.turnId === begin.turnId).map((e) => e.kind)).toEqual(['turn/begin', 'tool/call', 'tool/result'])
    // The session's next call joins its turn for this generation.
    await client.callTool({ name: 'lookup', arguments: { id: 43 } })
    const kinds = (await root.journal.read(begin.turnId)).map((e) => e.kind)
    expect(kinds).toEqual(['turn/begin', 'tool/call', 'tool/result', 'tool/call', 'tool/result'])
  })

  it('reports invalid arguments as an error result with its code, and an unknown tool as the JSON-RPC error -32602', async () => {
    const client = await connect(server.url)
    const invalid = await client.callTool({ name: 'lookup', arguments: { id: 'forty-two' } })
    expect(invalid.isError).toBe(true)
    expect(text(invalid)).toMatch(/^\[INVALID_ARGS\] /)
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: nope') })
  })

  it('denies a call that needs approval when the client cannot elicit (fail closed)', async () => {
    const client = await connect(server.url)
    const result = await client.callTool({ name: 'wipe', arguments: { id: 7 } })
    expect(result.isError).toBe(true)
    expect(text(result)).toMatch(/^\[APPROVAL_UNAVAILABLE\] /)
    const decided = (await root.journal.tail(10)).findLast((e) => e.kind === 'approval/decided')
    expect(decided).toMatchObject({ decision: 'unavailable' })
  })

  it('asks a client that supports elicitation, and runs the call when the answer is once', async () => {
    const asked: ElicitRequest['params'][] = []
    const client = await connect(server.url, { answer: () => 'once', asked })
    const result = await client.callTool({ name: 'wipe', arguments: { id: 7, apiToken: 'sk-live-123456' } })
    expect(result.isError).toBeFalsy()
    expect(text(result)).toContain('wiped ticket 7')
    expect(asked).toHaveLength(1)
    const question = asked[0] as Extract<ElicitRequest['params'], { requestedSchema: unknown }>
    expect(question.message).toContain('wipe id=7')
    expect(question.message).toContain('always asks for approval')
    expect(question.message).not.toContain('sk-live-123456')
    // `wipe` always asks: a session grant would mean nothing, so it is not offered.
    expect(question.requestedSchema.properties.decision).toMatchObject({ type: 'string', enum: ['once', 'reject'] })
  })

  it('takes no session answer for a tool that always asks: the call is denied, never granted for the session', async () => {
    const client = await connect(server.url, { answer: () => 'session' })
    const result = await client.callTool({ name: 'wipe', arguments: { id: 9 } })
    expect(text(result)).toMatch(/^\[DENIED\] /)
    expect((await root.journal.tail(10)).findLast((e) => e.kind === 'approval/decided')).toMatchObject({ decision: 'rejected' })
  })

  it.each([
    ['reject', '[DENIED]', 'rejected'],
    ['decline', '[DENIED]', 'rejected'],
    ['throw', '[APPROVAL_UNAVAILABLE]', 'unavailable'],
  ] as const)('denies the call when the elicitation answer is %s', async (answer, tag, decision) => {
    const client = await connect(server.url, { answer: () => answer })
    const result = await client.callTool({ name: 'wipe', arguments: { id: 8 } })
    expect(result.isError).toBe(true)
    expect(text(result).startsWith(tag)).toBe(true)
    expect((await root.journal.tail(10)).findLast((e) => e.kind === 'approval/decided')).toMatchObject({ decision })
  })

  it('cancels a running call when the client aborts it: the tool sees its signal abort and the journal says cancelled', async () => {
    const client = await connect(server.url)
    const marker = path.join(plugin.scratch, 'http-cancel')
    const controller = new AbortController()
    const call = client.callTool({ name: 'slow', arguments: { ms: 10_000, marker } }, { signal: controller.signal })
    await until('the slow call to start', async () => (await root.journal.tail(5)).some((e) => e.kind === 'tool/call' && e.name === 'slow'))
    const abortedAt = performance.now()
    controller.abort(new Error('user pressed stop'))
    await expect(call).rejects.toThrow()
    const content = await until('the marker file', () => readFile(marker, 'utf8').catch(() => ''))
    expect(content).toMatch(/^aborted: /)
    const result = await until('the cancelled result', async () =>
      (await root.journal.tail(10)).findLast((e) => e.kind === 'tool/result' && e.status === 'cancelled'),
    )
    expect(result).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(performance.now() - abortedAt).toBeLessThan(2_000)
  })

  it("runs a session's calls concurrently in its turn, and ends the turn when the client ends the session", async () => {
    const client = await connect(server.url)
    const marker = path.join(plugin.scratch, 'unused')
    const slow = client.callTool({ name: 'slow', arguments: { ms: 300, marker } })
    const fast = await client.callTool({ name: 'lookup', arguments: { id: 5 } })
    expect(fast.structuredContent).toMatchObject({ id: 5 })
    expect(text(await slow)).toContain('slept 300 ms')
    const turnId = (await root.journal.tail(3)).findLast((e) => e.kind === 'tool/result')!.turnId
    const results = (await root.journal.read(turnId)).filter((e) => e.kind === 'tool/result')
    expect(results).toHaveLength(2)
    await (client.transport as StreamableHTTPClientTransport).terminateSession()
    expect(await until('the turn to end', async () => (await root.journal.read(turnId)).at(-1)?.kind === 'turn/end')).toBe(true)
  })

  it('serves skills as prompts', async () => {
    const client = await connect(server.url)
    expect((await client.listPrompts()).prompts).toEqual([{ name: 'triage', description: 'Triage support tickets.' }])
    const prompt = await client.getPrompt({ name: 'triage' })
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: expect.stringContaining('Look the ticket up') } }])
    await expect(client.getPrompt({ name: 'missing' })).rejects.toThrow(/Unknown prompt/)
  })

  it("serves the built-in load_skill tool: it returns the skill's instructions (its prompt's text) and is journaled", async () => {
    const client = await connect(server.url)
    const prompt = await client.getPrompt({ name: 'triage' })
    const instructions = (prompt.messages[0]!.content as { text: string }).text
    expect(instructions).toBe('# Triage\nLook the ticket up, then decide.')
    const tool = (await client.listTools()).tools.find((t) => t.name === 'load_skill')!
    expect(tool.inputSchema).toMatchObject({ properties: { name: { enum: ['triage'] } }, required: ['name'] })
    expect(tool.annotations).toMatchObject({ readOnlyHint: true })
    const result = await client.callTool({ name: 'load_skill', arguments: { name: 'triage' } })
    expect(result.isError).toBeFalsy()
    expect(text(result)).toBe(`# Skill: triage\n\n${instructions}`)
    expect(result.structuredContent).toEqual({ name: 'triage', instructions, tools: [] })
    const events = await root.journal.tail(5)
    const call = events.findLast((e) => e.kind === 'tool/call')!
    expect(call).toMatchObject({ name: 'load_skill' })
    expect(events.findLast((e) => e.kind === 'tool/result')).toMatchObject({ callId: call.callId, status: 'completed' })
    const unknown = await client.callTool({ name: 'load_skill', arguments: { name: 'missing' } })
    expect(unknown.isError).toBe(true)
    expect(text(unknown)).toMatch(/^\[INVALID_ARGS\]/)
  })

  it('sends list_changed to every connected session when an edit changes a tool, and lists the new schema', async () => {
    const first = await connect(server.url)
    const second = await connect(server.url)
    const heard: number[] = []
    const started = performance.now()
    for (const [index, client] of [first, second].entries()) {
      await client.listTools()
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        heard.push(index)
      })
    }
    await first.callTool({ name: 'lookup', arguments: { id: 1 } })
    const oldTurn = (await root.journal.tail(5)).findLast((e) => e.kind === 'tool/result')!.turnId
    const before = root.generation
    await plugin.put('tools/lookup.ts', LOOKUP_V2)
    await until('list_changed on both sessions', () => heard.length >= 2, 10_000)
    lines.push(`list_changed after ${Math.round(performance.now() - started)} ms`)
    expect(root.generation).toBeGreaterThan(before)
    const lookup = (await first.listTools()).tools.find((t) => t.name === 'lookup')!
    expect(Object.keys(lookup.inputSchema.properties ?? {})).toEqual(['id', 'verbose'])
    const result = await first.callTool({ name: 'lookup', arguments: { id: 1, verbose: true } })
    expect(result.structuredContent).toMatchObject({ verbose: true })
    // The session's turn on the old generation was ended by the publish; the call began a new one.
    expect((await root.journal.read(oldTurn)).at(-1)).toMatchObject({ kind: 'turn/end' })
    const begin = (await root.journal.tail(5)).findLast((e) => e.kind === 'turn/begin')
    expect(begin).toMatchObject({ generation: root.generation })
    expect(begin!.turnId).not.toBe(oldTurn)
  })

  it('announces nothing when a publish leaves the lists as they were, and prompts list_changed when a skill changes', async () => {
    const client = await connect(server.url)
    await client.listTools()
    const heard: string[] = []
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      heard.push('tools')
    })
    client.setNotificationHandler('notifications/prompts/list_changed', () => {
      heard.push('prompts')
    })
    let generation = root.generation
    await plugin.put('tools/slow.ts', (await readFile(path.join(plugin.dir, 'tools/slow.ts'), 'utf8')).replace("'slept '", "'waited '"))
    await until('the body-only edit to publish', () => root.generation > generation, 10_000)
    generation = root.generation
    await plugin.put('agent/skills/triage.md', SKILL.replace('Triage support tickets.', 'Triage and route tickets.'))
    await until('prompts list_changed', () => heard.includes('prompts'), 10_000)
    expect(heard).toEqual(['prompts'])
    expect((await client.listPrompts()).prompts[0]?.description).toBe('Triage and route tickets.')
  })

  it('logs calls without their arguments', () => {
    expect(lines.some((line) => line.includes('tools/call "lookup" → completed'))).toBe(true)
    expect(lines.join('\n')).not.toContain('sk-live-123456')
  })
})

describe('serveHttp: who may connect', () => {
  const TOKEN = 'tok-0123456789abcdef'
  let plugin: ServePlugin
  let root: Root

  beforeAll(async () => {
    plugin = await servePlugin()
    root = await createRoot({ dir: plugin.dir })
  })
  afterAll(async () => {
    await root.close()
    await plugin.remove()
  })

  it('answers 401 to a request without the bearer token, and serves one that carries it', async () => {
    const lines: string[] = []
    const server = await serveHttp(root, { port: 0, token: TOKEN, log: (line) => lines.push(line) })
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
    const server = await serveHttp(root, { port: 0 })
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
    const server = await serveHttp(root, { port: 0, allowedOrigins: ['https://console.example.com'] })
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
    await expect(serveHttp(root, { host: '0.0.0.0', port: 0 })).rejects.toMatchObject({ name: 'SeamError', code: 'INVALID_OPTIONS' })
    await expect(serveHttp(root, { host: '0.0.0.0', port: 0, token: '  ' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' })
    // A token no Authorization header could carry.
    await expect(serveHttp(root, { port: 0, token: 'two words' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('white space') })
  })

  it('listens beyond loopback with a token', async () => {
    const server = await serveHttp(root, { host: '0.0.0.0', port: 0, token: TOKEN })
    onTestFinished(() => server.close())
    const local = server.url.replace('0.0.0.0', '127.0.0.1')
    const client = await connect(local, { token: TOKEN })
    expect((await client.listTools()).tools).toHaveLength(4)
  })

  it('reports a taken port as LISTEN_FAILED', async () => {
    const server = await serveHttp(root, { port: 0 })
    onTestFinished(() => server.close())
    const port = Number(new URL(server.url).port)
    await expect(serveHttp(root, { port })).rejects.toMatchObject({ code: 'LISTEN_FAILED', hint: expect.stringContaining('port') })
  })

  it('expires a session whose client vanished without ending it', async () => {
    const logs: string[] = []
    const server = await serveHttp(root, { port: 0, sessionIdleMs: 80, log: (line) => logs.push(line) })
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
    const server = await serveHttp(root, { port: 0, maxSessions: 2, log: (line) => logs.push(line) })
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
    const server = await serveHttp(root, { port: 0, maxSessions: 1 })
    onTestFinished(() => server.close())
    const busy = await connect(server.url)
    const marker = path.join(plugin.scratch, 'busy-marker')
    const running = busy.callTool({ name: 'slow', arguments: { ms: 600, marker } })
    await new Promise((resolve) => setTimeout(resolve, 150))
    const refused = new Client({ name: 'refused', version: '1.0.0' })
    await expect(refused.connect(new StreamableHTTPClientTransport(new URL(server.url)))).rejects.toThrow(/503|busy/)
    expect(text(await running)).toContain('slept 600 ms')
    const next = await connect(server.url)
    expect((await next.listTools()).tools.length).toBeGreaterThan(0)
    await expect(serveHttp(root, { port: 0, maxSessions: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' })
  })

  it('still takes a fresh client after 1,000 sessions were opened and abandoned', { timeout: 60_000 }, async () => {
    const server = await serveHttp(root, { port: 0 })
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
    const server = await serveHttp(root, { port: 0, sessionIdleMs: 80 })
    onTestFinished(() => server.close())
    const client = await connect(server.url)
    await client.listTools()
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
  })

  it('close() ends the sessions and the listener, and is idempotent', async () => {
    const server = await serveHttp(root, { port: 0 })
    const client = await connect(server.url)
    await client.listTools()
    await Promise.all([server.close(), server.close()])
    await expect(fetch(server.url, { method: 'POST', body: '{}' })).rejects.toThrow()
  })
})

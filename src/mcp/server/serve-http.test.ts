import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { ElicitRequest, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoot, type Root } from '../../index.js'
import type { JournalEvent } from '../../seams/journal.js'
import { LOOKUP_V2, SKILL, type ServePlugin, servePlugin, until } from '../fixtures/serve-plugin.js'
import { connect, text } from '../fixtures/serve-http-client.js'
import { serveHttp } from './serve.js'

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

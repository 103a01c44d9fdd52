import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, type Root } from '../../index.js'
import type { JournalEvent } from '../../seams/journal.js'
import { rawRequest } from '../fixtures/raw-request.js'
import { type ServePlugin, servePlugin, until } from '../fixtures/serve-plugin.js'
import { serveHttp } from './serve.js'

const NAME = "{ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }"

/** Tools that ask their client: all three at once, two questions one after the other, sampling alone, and a task asking twice. */
const TOOLS = {
  asks: `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Asks a name, a sample and the roots at once.',
  input: z.object({}),
  approval: 'never',
  async execute(_args, ctx) {
    const [name, sample, roots] = await Promise.all([
      ctx.ask({ key: 'who', message: 'Your name?', schema: ${NAME} }),
      ctx.sample({ key: 'hello', messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }], maxTokens: 20 }),
      ctx.roots(),
    ])
    return { name, text: sample.content.text, model: sample.model, roots }
  },
})
`,
  two_steps: `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Asks twice, one after the other.',
  input: z.object({}),
  approval: 'never',
  async execute(_args, ctx) {
    const first = await ctx.ask({ message: 'First?', schema: ${NAME} })
    const second = await ctx.ask({ message: 'Second?', schema: ${NAME} })
    return [first, second].map((a) => (a.action === 'accept' ? a.content.name : a.action)).join(' then ')
  },
})
`,
  sampler: `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Samples, and says why it could not.',
  input: z.object({}),
  approval: 'never',
  async execute(_args, ctx) {
    try {
      const result = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 5 })
      return 'sampled: ' + result.content.text
    } catch (error) {
      return 'refused: ' + error.code
    }
  },
})
`,
  task_asks: `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'A task that asks two questions at once.',
  input: z.object({}),
  approval: 'never',
  task: 'optional',
  async execute(_args, ctx) {
    const [a, b] = await Promise.all([
      ctx.ask({ key: 'a', message: 'A?', schema: ${NAME} }),
      ctx.ask({ key: 'b', message: 'B?', schema: ${NAME} }),
    ])
    return [a, b].map((x) => (x.action === 'accept' ? x.content.name : x.action)).join(' and ')
  },
})
`,
}

const text = (result: { content: unknown }) => (result.content as { text: string }[]).map((c) => c.text).join('\n')

type Caps = { elicitation?: Record<string, never> | { form: Record<string, never> }; sampling?: Record<string, never>; roots?: Record<string, never> }

/**
 * A real SDK client answering every question `Ada`, every sampling request `Hello!` and listing one
 * root; pinned to 2026-07-28 (where the SDK drives the input_required rounds) or not. `states` holds
 * the requestState each retry carried, `tamper` may change it first.
 */
async function connect(url: string, options: { modern?: boolean; capabilities?: Caps; tamper?: (state: string) => string } = {}) {
  const states: string[] = []
  const recording: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string' && init.body.includes('"requestState"')) {
      const body = JSON.parse(init.body) as { params: { requestState: string } }
      states.push(body.params.requestState)
      if (options.tamper) body.params.requestState = options.tamper(body.params.requestState)
      init = { ...init, body: JSON.stringify(body) }
    }
    return fetch(input, init)
  }
  const capabilities = options.capabilities ?? { elicitation: { form: {} }, sampling: {}, roots: {} }
  const client = new Client({ name: 'asks', version: '1.0.0' }, { capabilities, ...(options.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' as const } } } : {}) })
  const seen: string[] = []
  if (capabilities.elicitation) {
    client.setRequestHandler('elicitation/create', async (request) => {
      seen.push(`elicit ${request.params.message}`)
      return { action: 'accept', content: { name: 'Ada' } }
    })
  }
  if (capabilities.sampling) {
    client.setRequestHandler('sampling/createMessage', async () => {
      seen.push('sample')
      return { role: 'assistant', content: { type: 'text', text: 'Hello!' }, model: 'test-model', stopReason: 'endTurn' }
    })
  }
  if (capabilities.roots) {
    client.setRequestHandler('roots/list', async () => {
      seen.push('roots')
      return { roots: [{ uri: 'file:///work', name: 'work' }] }
    })
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }))
  onTestFinished(() => client.close())
  return { client, states, seen }
}

async function journalOf(root: Root, tool: string): Promise<JournalEvent[]> {
  const call = (await root.journal.tail(200)).findLast((e) => e.kind === 'tool/call' && e.name === tool)!
  return (await root.journal.read(call.turnId)).filter((e) => (e as { callId?: string }).callId === (call as { callId: string }).callId)
}

describe('a served tool asking its client (ctx.ask, ctx.sample, ctx.roots)', () => {
  let plugin: ServePlugin
  let root: Root
  let server: { url: string; close(): Promise<void> }

  beforeAll(async () => {
    plugin = await servePlugin()
    for (const [name, source] of Object.entries(TOOLS)) await plugin.put(`tools/${name}.ts`, source)
    root = await createRoot({ dir: plugin.dir, defaults: { approvalTimeoutMs: 1_500 } })
    server = await serveHttp(root, { port: 0 })
  })
  afterAll(async () => {
    await server.close()
    await root.close()
    await plugin.remove()
  })

  it('on 2025-11-25 sends elicitation/create, sampling/createMessage and roots/list on the call, and journals each with its answer', async () => {
    const { client, seen } = await connect(server.url)
    const result = await client.callTool({ name: 'asks', arguments: {} })
    expect(result.structuredContent).toEqual({
      name: { action: 'accept', content: { name: 'Ada' } },
      text: 'Hello!',
      model: 'test-model',
      roots: [{ uri: 'file:///work', name: 'work' }],
    })
    expect(seen.sort()).toEqual(['elicit Your name?', 'roots', 'sample'])
    const events = await journalOf(root, 'asks')
    const asked = events.filter((e) => e.kind === 'question/asked')
    expect(asked.map((e) => [e.questionId, e.method])).toEqual([
      ['q1', undefined],
      ['q2', 'sampling/createMessage'],
      ['q3', 'roots/list'],
    ])
    expect(asked[1]).toMatchObject({ message: 'Say hello' })
    const answered = events.filter((e) => e.kind === 'question/answered')
    expect(answered.map((e) => [e.questionId, e.action])).toEqual([
      ['q1', 'accept'],
      ['q2', 'accept'],
      ['q3', 'accept'],
    ])
    expect(JSON.parse(answered[2]!.content!)).toEqual({ roots: [{ uri: 'file:///work', name: 'work' }] })
  })

  it('on 2026-07-28 asks all three in one input_required round, and the retry gets the result', async () => {
    const { client, states, seen } = await connect(server.url, { modern: true })
    const result = await client.callTool({ name: 'asks', arguments: {} })
    expect(result.structuredContent).toMatchObject({ name: { action: 'accept', content: { name: 'Ada' } }, text: 'Hello!', roots: [{ uri: 'file:///work' }] })
    expect(states).toHaveLength(1)
    expect(seen.sort()).toEqual(['elicit Your name?', 'roots', 'sample'])
    const events = await journalOf(root, 'asks')
    expect(events.filter((e) => e.kind === 'question/answered').map((e) => e.action)).toEqual(['accept', 'accept', 'accept'])
    expect(events.filter((e) => e.kind === 'tool/result')).toHaveLength(1)
  })

  it('on 2026-07-28 asks questions one after the other in rounds of their own, each with a new requestState', async () => {
    const { client, states, seen } = await connect(server.url, { modern: true })
    const result = await client.callTool({ name: 'two_steps', arguments: {} })
    expect(text(result)).toBe('Ada then Ada')
    expect(states).toHaveLength(2)
    expect(states[0]).not.toBe(states[1])
    expect(seen).toEqual(['elicit First?', 'elicit Second?'])
  })

  it('names the input requests with the keys the body gave, and refuses a tampered requestState', async () => {
    const first = await rawRequest(server.url, 'tools/call', { name: 'asks', arguments: {} }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } })
    expect(first.result).toMatchObject({ resultType: 'input_required' })
    expect(Object.keys(first.result!.inputRequests).sort()).toEqual(['hello', 'q3', 'who'])
    expect(first.result!.inputRequests.hello).toMatchObject({ method: 'sampling/createMessage', params: { maxTokens: 20 } })
    const tampered = await rawRequest(server.url, 'tools/call', { name: 'asks', arguments: {}, requestState: `${first.result!.requestState}x`, inputResponses: {} })
    expect(tampered.error, JSON.stringify(tampered)).toMatchObject({ code: -32602 })
    // Another tool's retry, or other arguments, cannot pick the held call up either.
    const foreign = await rawRequest(server.url, 'tools/call', { name: 'two_steps', arguments: {}, requestState: first.result!.requestState, inputResponses: {} })
    expect(foreign.error?.code).toBe(-32602)
  })

  it('declines a question and refuses a request the client did not declare the capability for, in both eras', async () => {
    for (const modern of [false, true]) {
      const { client, seen } = await connect(server.url, { modern, capabilities: { elicitation: { form: {} } } })
      expect(text(await client.callTool({ name: 'sampler', arguments: {} }))).toBe('refused: CLIENT_UNSUPPORTED')
      expect(seen).toEqual([])
    }
    const events = await journalOf(root, 'sampler')
    expect(events.find((e) => e.kind === 'question/answered')).toMatchObject({ action: 'cancel', reason: 'no-port' })
    // Only sampling declared: the question is declined at once and only the sampling request is asked.
    const round = await rawRequest(server.url, 'tools/call', { name: 'asks', arguments: {} }, { capabilities: { sampling: {}, roots: {} } })
    expect(round.result?.resultType).toBe('input_required')
    expect(Object.values(round.result!.inputRequests).map((r) => (r as { method: string }).method)).toEqual(['sampling/createMessage', 'roots/list'])
  })

  it('settles a held call whose retry never comes at the question deadline, with one journaled result', async () => {
    const round = await rawRequest(server.url, 'tools/call', { name: 'two_steps', arguments: {} })
    expect(round.result?.resultType).toBe('input_required')
    const events = await until('the held call to settle', async () => {
      const events = await journalOf(root, 'two_steps')
      return events.some((e) => e.kind === 'tool/result') ? events : undefined
    })
    expect(events.filter((e) => e.kind === 'question/answered').map((e) => [e.action, e.kind === 'question/answered' ? e.reason : undefined])).toEqual([
      ['cancel', 'timeout'],
      ['cancel', 'timeout'],
    ])
    expect(events.filter((e) => e.kind === 'tool/result')).toHaveLength(1)
    expect(events.find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'completed' })
    // A late retry of its last round gets the outcome that stands; nothing runs again.
    const late = await rawRequest(server.url, 'tools/call', { name: 'two_steps', arguments: {}, requestState: round.result!.requestState, inputResponses: { q1: { action: 'accept', content: { name: 'Ada' } } } })
    expect(late.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'cancel then cancel' }] })
    expect((await journalOf(root, 'two_steps')).filter((e) => e.kind === 'tool/result')).toHaveLength(1)
  })

  it('shows a task’s two questions on tasks/get and takes their answers one tasks/update at a time', async () => {
    const created = await rawRequest(server.url, 'tools/call', { name: 'task_asks', arguments: {} })
    const taskId = created.result!.taskId as string
    expect(created.result!.resultType).toBe('task')
    const waiting = await until('the task to ask', async () => {
      const got = (await rawRequest(server.url, 'tasks/get', { taskId })).result!
      return got.status === 'input_required' && Object.keys(got.inputRequests ?? {}).length === 2 ? got : undefined
    })
    expect(waiting.inputRequests.a).toMatchObject({ method: 'elicitation/create', params: { message: 'A?' } })
    expect((await rawRequest(server.url, 'tasks/update', { taskId, inputResponses: { a: { action: 'accept', content: { name: 'Ada' } } } })).result).toMatchObject({ resultType: 'complete' })
    const partly = (await rawRequest(server.url, 'tasks/get', { taskId })).result!
    expect(partly.status).toBe('input_required')
    expect(Object.keys(partly.inputRequests)).toEqual(['b'])
    await rawRequest(server.url, 'tasks/update', { taskId, inputResponses: { b: { action: 'accept', content: { name: 'Bo' } } } })
    const done = await until('the task to complete', async () => {
      const got = (await rawRequest(server.url, 'tasks/get', { taskId })).result!
      return got.status === 'completed' ? got : undefined
    })
    expect(done.result.content[0].text).toBe('Ada and Bo')
    const events = await journalOf(root, 'task_asks')
    expect(events.filter((e) => e.kind === 'question/asked').map((e) => e.kind === 'question/asked' && e.message)).toEqual(['A?', 'B?'])
    expect(events.filter((e) => e.kind === 'question/answered').map((e) => e.kind === 'question/answered' && e.content)).toEqual(['{"name":"Ada"}', '{"name":"Bo"}'])
  })
})

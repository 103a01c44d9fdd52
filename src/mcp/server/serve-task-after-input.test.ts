import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { createRoot, defineTool, type Root } from '../../index.js'
import type { JournalEvent } from '../../seams/journal.js'
import { rawRequest } from '../fixtures/raw-request.js'
import { type ServePlugin, servePlugin, until } from '../fixtures/serve-plugin.js'
import { serveHttp } from './serve.js'

const NAME = "{ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }"

/** Task tools that start held (`taskStarts: 'after-input'`); each counts its body's runs on `globalThis`. */
const TOOLS = {
  greet_task: `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Asks a name, then greets as a task.',
  input: z.object({}),
  approval: 'never',
  task: 'required',
  taskStarts: 'after-input',
  async execute(_args, ctx) {
    globalThis.afterInputRuns = { ...globalThis.afterInputRuns, greet_task: (globalThis.afterInputRuns?.greet_task ?? 0) + 1 }
    const answer = await ctx.ask({ key: 'user_name', message: 'Your name?', schema: ${NAME} })
    return answer.action === 'accept' ? 'Hello, ' + answer.content.name + '!' : 'no name (' + answer.action + ')'
  },
})
`,
  ask_twice: `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Asks a name, works a while, then asks again.',
  input: z.object({}),
  approval: 'never',
  task: 'optional',
  taskStarts: 'after-input',
  async execute(_args, ctx) {
    globalThis.afterInputRuns = { ...globalThis.afterInputRuns, ask_twice: (globalThis.afterInputRuns?.ask_twice ?? 0) + 1 }
    const first = await ctx.ask({ key: 'who', message: 'Who?', schema: ${NAME} })
    await new Promise((resolve) => setTimeout(resolve, 400))
    const second = await ctx.ask({ key: 'again', message: 'Who again?', schema: ${NAME} })
    return [first, second].map((a) => (a.action === 'accept' ? a.content.name : a.action)).join(' then ')
  },
})
`,
  quiet_task: `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Never asks.',
  input: z.object({}),
  approval: 'never',
  task: 'optional',
  taskStarts: 'after-input',
  async execute() {
    globalThis.afterInputRuns = { ...globalThis.afterInputRuns, quiet_task: (globalThis.afterInputRuns?.quiet_task ?? 0) + 1 }
    await new Promise((resolve) => setTimeout(resolve, 300))
    return 'quiet done'
  },
})
`,
  guarded_task: `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Needs approval.',
  input: z.object({ target: z.string() }),
  approval: 'always',
  task: 'optional',
  taskStarts: 'after-input',
  execute: ({ target }) => 'deployed ' + target,
})
`,
}

const runs = (tool: string) => (globalThis as { afterInputRuns?: Record<string, number> }).afterInputRuns?.[tool] ?? 0

async function journalOf(root: Root, tool: string): Promise<JournalEvent[]> {
  const call = (await root.journal.tail(200)).findLast((e) => e.kind === 'tool/call' && e.name === tool)!
  return (await root.journal.read(call.turnId)).filter((e) => (e as { callId?: string }).callId === (call as { callId: string }).callId)
}

describe("a task tool with taskStarts: 'after-input' (input_required rounds, then a task)", () => {
  let plugin: ServePlugin
  let root: Root
  let server: { url: string; close(): Promise<void> }

  beforeAll(async () => {
    plugin = await servePlugin()
    for (const [name, source] of Object.entries(TOOLS)) await plugin.put(`tools/${name}.ts`, source)
    root = await createRoot({ dir: plugin.dir })
    server = await serveHttp(root, { port: 0 })
  })
  afterAll(async () => {
    await server.close()
    await root.close()
    await plugin.remove()
  })

  const settled = (taskId: string) =>
    until('the task to settle', async () => {
      const got = (await rawRequest(server.url, 'tasks/get', { taskId })).result!
      return got.status === 'completed' || got.status === 'failed' ? got : undefined
    })

  it('asks in an input_required round, answers the retry with the task, and the task’s result holds the answer; the body ran once', async () => {
    const before = runs('greet_task')
    const round = (await rawRequest(server.url, 'tools/call', { name: 'greet_task', arguments: {} })).result!
    expect(round).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: { method: 'elicitation/create', params: { message: 'Your name?' } } } })
    expect(round.taskId).toBeUndefined()
    const created = (
      await rawRequest(server.url, 'tools/call', { name: 'greet_task', arguments: {}, requestState: round.requestState, inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } } })
    ).result!
    expect(created).toMatchObject({ resultType: 'task', taskId: expect.any(String), status: expect.stringMatching(/working|completed/) })
    expect(created.requestState).toBeUndefined()
    expect(created.inputRequests).toBeUndefined()
    const done = await settled(created.taskId)
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'Hello, Alice!' }] } })
    expect(runs('greet_task') - before).toBe(1)
    // One journaled call, its question asked and answered, one result.
    const events = await journalOf(root, 'greet_task')
    expect(events.map((e) => e.kind)).toEqual(['tool/call', 'question/asked', 'question/answered', 'tool/result'])
    expect(events.at(-1)).toMatchObject({ status: 'completed' })
    // The round's state continued a held call that is a task now: a second retry finds nothing held.
    const again = await rawRequest(server.url, 'tools/call', { name: 'greet_task', arguments: {}, requestState: round.requestState, inputResponses: { user_name: { action: 'accept', content: { name: 'Bob' } } } })
    expect(again.error).toMatchObject({ code: -32602, message: expect.stringContaining('HELD_CALL_UNKNOWN') })
    expect(runs('greet_task') - before).toBe(1)
  })

  it('asks a question the body puts after becoming a task through the task: tasks/get shows it, tasks/update answers it', async () => {
    const before = runs('ask_twice')
    const round = (await rawRequest(server.url, 'tools/call', { name: 'ask_twice', arguments: {} })).result!
    expect(Object.keys(round.inputRequests)).toEqual(['who'])
    const created = (await rawRequest(server.url, 'tools/call', { name: 'ask_twice', arguments: {}, requestState: round.requestState, inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } } }))
      .result!
    expect(created.resultType).toBe('task')
    const taskId = created.taskId as string
    const asking = await until('the task to ask', async () => {
      const got = (await rawRequest(server.url, 'tasks/get', { taskId })).result!
      return got.status === 'input_required' ? got : undefined
    })
    expect(asking.inputRequests).toEqual({ again: { method: 'elicitation/create', params: expect.objectContaining({ message: 'Who again?' }) } })
    expect((await rawRequest(server.url, 'tasks/update', { taskId, inputResponses: { again: { action: 'accept', content: { name: 'Bo' } } } })).result).toMatchObject({ resultType: 'complete' })
    expect(await settled(taskId)).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'Ada then Bo' }] } })
    expect(runs('ask_twice') - before).toBe(1)
    const events = await journalOf(root, 'ask_twice')
    expect(events.filter((e) => e.kind === 'tool/call')).toHaveLength(1)
    expect(events.filter((e) => e.kind === 'question/answered').map((e) => e.kind === 'question/answered' && e.content)).toEqual(['{"name":"Ada"}', '{"name":"Bo"}'])
    expect(events.filter((e) => e.kind === 'tool/result')).toHaveLength(1)
  })

  it('makes a body that never asks a task on its first request, running on past the request', async () => {
    const before = runs('quiet_task')
    const created = (await rawRequest(server.url, 'tools/call', { name: 'quiet_task', arguments: {} })).result!
    expect(created).toMatchObject({ resultType: 'task', status: 'working' })
    expect(await settled(created.taskId)).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'quiet done' }] } })
    expect(runs('quiet_task') - before).toBe(1)
    expect((await journalOf(root, 'quiet_task')).map((e) => e.kind)).toEqual(['tool/call', 'tool/result'])
  })

  it('cancels a task that started held: tasks/cancel aborts the body, which was held a round before', async () => {
    const round = (await rawRequest(server.url, 'tools/call', { name: 'ask_twice', arguments: {} })).result!
    const created = (await rawRequest(server.url, 'tools/call', { name: 'ask_twice', arguments: {}, requestState: round.requestState, inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } } }))
      .result!
    const taskId = created.taskId as string
    expect((await rawRequest(server.url, 'tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' })
    const events = await until('the call to close', async () => {
      const events = await journalOf(root, 'ask_twice')
      return events.some((e) => e.kind === 'tool/result') ? events : undefined
    })
    expect(events.find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'cancelled' })
    expect((await rawRequest(server.url, 'tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled' })
  })

  it('parks a call that needs approval as a task on its first request: tasks/update decides it and the call completes', async () => {
    const created = (await rawRequest(server.url, 'tools/call', { name: 'guarded_task', arguments: { target: 'prod' } })).result!
    expect(created.resultType).toBe('task')
    const taskId = created.taskId as string
    const parked = await until('the task to park', async () => {
      const got = (await rawRequest(server.url, 'tasks/get', { taskId })).result!
      return got.status === 'input_required' ? got : undefined
    })
    expect(Object.keys(parked.inputRequests)).toEqual(['approval'])
    expect(await root.approvals.pending()).toMatchObject([{ tool: 'guarded_task', arguments: { target: 'prod' } }])
    await rawRequest(server.url, 'tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { decision: 'once' } } } })
    expect(await settled(taskId)).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'deployed prod' }] } })
    expect(await root.approvals.pending()).toEqual([])
  })

  it('is a plain held call for an SDK client without the tasks extension: rounds through the SDK, then the result', async () => {
    const before = runs('ask_twice')
    const client = new Client({ name: 'no-tasks', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } })
    client.setRequestHandler('elicitation/create', async (request) => ({ action: 'accept', content: { name: request.params.message === 'Who?' ? 'Ada' : 'Bo' } }))
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    onTestFinished(() => client.close())
    const result = await client.callTool({ name: 'ask_twice', arguments: {} })
    expect(result.content).toEqual([{ type: 'text', text: 'Ada then Bo' }])
    expect(runs('ask_twice') - before).toBe(1)
    // A task-only tool stays refused to it.
    await expect(client.callTool({ name: 'greet_task', arguments: {} })).rejects.toMatchObject({ code: -32021 })
  })

  it('validates taskStarts: one of its two values, and only with task', () => {
    const spec = { description: 'x', input: z.object({}), execute: () => 'ok' }
    expect(() => defineTool({ ...spec, task: 'optional', taskStarts: 'later' as never })).toThrow(expect.objectContaining({ code: 'INVALID_TOOL' }))
    expect(() => defineTool({ ...spec, taskStarts: 'after-input' })).toThrow(expect.objectContaining({ code: 'INVALID_TOOL', message: expect.stringContaining('set `task`') }))
    expect(() => defineTool({ ...spec, task: 'required', taskStarts: 'at-once' })).not.toThrow()
  })
})

import { randomUUID } from 'node:crypto'
import { createServer, connect, type Socket } from 'node:net'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { createRoot, definePlugin, defineTool, postgresJournal, type Root } from 'seam-runtime'
import { McpToolService } from '../src/mcp/client/mcp-tool-service.js'
import { rawRequest } from '../src/mcp/fixtures/raw-request.js'
import { contextWith } from '../src/mcp/fixtures/test-helpers.js'
import { serveHttp } from '../src/mcp/server/serve.js'

const url = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: url, max: 2 })
afterAll(() => admin.end())

const TASKS = 'io.modelcontextprotocol/tasks'
const VERSION = '2026-07-28'

/** The bodies' starts, by label, and the signals that abort them: what each host really ran. */
const started: string[] = []
const aborted: string[] = []

const plugin = definePlugin({
  name: 'root',
  setup(ctx) {
    ctx.addTool(
      'build',
      defineTool({
        description: 'Builds for a while.',
        input: z.object({ ms: z.number(), label: z.string() }),
        approval: 'never',
        task: 'optional',
        timeoutMs: 60_000,
        async execute({ ms, label }, { signal }) {
          started.push(label)
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, ms)
            signal.addEventListener('abort', () => {
              clearTimeout(timer)
              aborted.push(label)
              reject(signal.reason)
            })
          })
          return `built ${label}`
        },
      }),
    )
    ctx.addTool(
      'survey',
      defineTool({
        description: 'Asks two questions at once.',
        input: z.object({}),
        approval: 'never',
        task: 'required',
        async execute(_args, ctx) {
          const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } as const
          const replies = await Promise.all([ctx.ask({ key: 'a', message: 'A?', schema }), ctx.ask({ key: 'b', message: 'B?', schema })])
          return replies.map((reply) => (reply.action === 'accept' ? String(reply.content.name) : reply.action)).join(' and ')
        },
      }),
    )
    ctx.addTool(
      'deploy',
      defineTool({
        description: 'Deploys, once a person allows it.',
        input: z.object({ target: z.string() }),
        approval: 'always',
        task: 'required',
        execute: ({ target }) => `deployed ${target}`,
      }),
    )
  },
})

/** A host: a root on the shared PostgreSQL schema, serving MCP over HTTP. */
async function host(schema: string, hostId: string): Promise<{ root: Root; url: string }> {
  const root = await createRoot({ plugin, journal: postgresJournal(url, { schema, hostId }) })
  const http = await serveHttp(root, { port: 0 })
  onTestFinished(async () => {
    await http.close()
    await root.close()
  })
  return { root, url: http.url }
}

async function twoHosts() {
  const { a, b } = await threeHosts(false)
  return { a, b }
}

async function threeHosts(third = true) {
  const schema = `seam_tasks_${randomUUID().replaceAll('-', '').slice(0, 16)}`
  onTestFinished(() => admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).then(() => undefined))
  const a = await host(schema, 'host-a')
  const b = await host(schema, 'host-b')
  return { a, b, c: third ? await host(schema, 'host-c') : undefined }
}

/**
 * Holds each host's first read of a task until both hosts have read it, so the two read the same
 * stored task before either writes: the interleaving of two requests that arrive together.
 */
function readTogether(roots: readonly Root[]): void {
  let waiting = roots.length
  let release!: () => void
  const both = new Promise<void>((resolve) => (release = resolve))
  for (const root of roots) {
    const coordination = root.journal.coordination
    const read = coordination.readTask.bind(coordination)
    let first = true
    coordination.readTask = async (taskId) => {
      const task = await read(taskId)
      if (first) {
        first = false
        waiting -= 1
        if (waiting === 0) release()
        await both
      }
      return task
    }
  }
}

/**
 * One 2026-07-28 request over its own HTTP connection (closed when answered, as a dropped client's
 * would be): the JSON-RPC result, or the error as `{ error }`.
 */
async function rpc(endpoint: string, method: string, params: Record<string, unknown>, options: { tasks?: boolean } = {}) {
  const capabilities = options.tasks === false ? {} : { elicitation: { form: {} }, extensions: { [TASKS]: {} } }
  const body = await rawRequest(endpoint, method, params, { capabilities, closeConnection: true })
  return body.error ? { error: body.error } : (body.result as Record<string, unknown>)
}

async function until(endpoint: string, taskId: string, done: (task: Record<string, unknown>) => boolean, ms = 10_000) {
  const deadline = Date.now() + ms
  for (;;) {
    const task = await rpc(endpoint, 'tasks/get', { taskId })
    if (done(task) || Date.now() > deadline) return task
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function resultOf(root: Root, callId: (id: string) => boolean) {
  for (const turn of (await root.journal.turns()).turns) {
    const result = (await root.journal.read(turn.turnId)).find((event) => event.kind === 'tool/result' && callId(event.callId))
    if (result) return result
  }
  return undefined
}

describe('MCP tasks on two hosts sharing a PostgreSQL journal', () => {
  it('starts a task on host A, answers for it from host B after the connection closed, and inlines its result', async () => {
    const { a, b } = await twoHosts()
    const created = await rpc(a.url, 'tools/call', { name: 'build', arguments: { ms: 400, label: 'lib' } })
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: expect.any(Number), pollIntervalMs: expect.any(Number) })
    const taskId = created.taskId as string
    // Host B has never seen this task's request: it reads the task from the journal.
    expect(await rpc(b.url, 'tasks/get', { taskId })).toMatchObject({ resultType: 'complete', taskId, status: 'working' })
    const done = await until(b.url, taskId, (task) => task.status !== 'working')
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'built lib' }] } })
    expect(done.error).toBeUndefined()
    // The call ran once, on host A, and is journaled as any call is.
    expect(started.filter((label) => label === 'lib')).toHaveLength(1)
    expect((await resultOf(b.root, () => true))?.host).toBe('host-a')
  })

  it('cancels from host B a task running on host A: B settles it cancelled, A aborts the call', async () => {
    const { a, b } = await twoHosts()
    const created = await rpc(a.url, 'tools/call', { name: 'build', arguments: { ms: 30_000, label: 'slow' } })
    const taskId = created.taskId as string
    expect(await rpc(b.url, 'tasks/cancel', { taskId })).toEqual({ resultType: 'complete', _meta: expect.any(Object) })
    expect(await rpc(a.url, 'tasks/get', { taskId })).toMatchObject({ status: 'cancelled' })
    // Host A sees the cancel within its poll interval and aborts the body; the journal closes the call.
    const deadline = Date.now() + 5_000
    while (!aborted.includes('slow') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(aborted).toContain('slow')
    // Idempotent on a settled task; an unknown id is -32602.
    expect(await rpc(a.url, 'tasks/cancel', { taskId })).toMatchObject({ resultType: 'complete' })
    expect(await rpc(b.url, 'tasks/get', { taskId: 'no-such-task' })).toMatchObject({ error: { code: -32602 } })
  })

  it('parks a task for approval on host A; host B takes the answer, decides the parked call and completes it', async () => {
    const { a, b } = await twoHosts()
    const created = await rpc(a.url, 'tools/call', { name: 'deploy', arguments: { target: 'prod' } })
    const taskId = created.taskId as string
    const asking = await until(b.url, taskId, (task) => task.status !== 'working')
    expect(asking).toMatchObject({ status: 'input_required', inputRequests: { approval: { method: 'elicitation/create' } } })
    expect(await a.root.approvals.pending()).toMatchObject([{ tool: 'deploy', arguments: { target: 'prod' } }])
    expect(await rpc(b.url, 'tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { decision: 'once' } } } })).toMatchObject({
      resultType: 'complete',
    })
    const done = await until(a.url, taskId, (task) => task.status === 'completed' || task.status === 'failed')
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'deployed prod' }] } })
    expect(await a.root.approvals.pending()).toEqual([])
  })

  it('takes two answers to a task running on host A stored at once by hosts B and C: neither answer is lost', async () => {
    const { a, b, c } = await threeHosts()
    const created = await rpc(a.url, 'tools/call', { name: 'survey', arguments: {} })
    const taskId = created.taskId as string
    const asking = await until(b.url, taskId, (task) => Object.keys((task.inputRequests as object | undefined) ?? {}).length === 2)
    expect(Object.keys(asking.inputRequests as object).sort()).toEqual(['a', 'b'])
    readTogether([b.root, c!.root])
    await Promise.all([
      rpc(b.url, 'tasks/update', { taskId, inputResponses: { a: { action: 'accept', content: { name: 'Ada' } } } }),
      rpc(c!.url, 'tasks/update', { taskId, inputResponses: { b: { action: 'accept', content: { name: 'Bo' } } } }),
    ])
    const done = await until(b.url, taskId, (task) => task.status === 'completed' || task.status === 'failed')
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'Ada and Bo' }] } })
  })

  it('refuses the task methods, and a task-only tool, to a client that did not declare the extension; a task-capable tool runs at once for it', async () => {
    const { a } = await twoHosts()
    expect(await rpc(a.url, 'tasks/get', { taskId: 'x' }, { tasks: false })).toMatchObject({ error: { code: -32021 } })
    expect(await rpc(a.url, 'tools/call', { name: 'deploy', arguments: { target: 'prod' } }, { tasks: false })).toMatchObject({ error: { code: -32021 } })
    // The official SDK client, which does not declare the extension: a plain result.
    const client = new Client({ name: 'tasks-sdk', version: '1.0.0' }, { versionNegotiation: { mode: { pin: VERSION } } })
    await client.connect(new StreamableHTTPClientTransport(new URL(a.url)))
    onTestFinished(() => client.close())
    await expect(client.callTool({ name: 'deploy', arguments: { target: 'prod' } })).rejects.toMatchObject({ code: -32021 })
    const result = await client.callTool({ name: 'build', arguments: { ms: 10, label: 'sdk' } })
    expect(result.content).toEqual([{ type: 'text', text: 'built sdk' }])
  })

  it('McpToolService mounts a task-capable tool as a task: the call survives every connection to the server being dropped mid-call', async () => {
    const { a } = await twoHosts()
    // A TCP proxy in front of host A whose open connections can all be cut at once.
    const sockets = new Set<Socket>()
    const target = new URL(a.url)
    const proxy = createServer((inbound) => {
      const outbound = connect(Number(target.port), target.hostname)
      for (const socket of [inbound, outbound]) {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
        socket.on('error', () => {})
      }
      inbound.pipe(outbound).pipe(inbound)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    onTestFinished(() => new Promise<void>((resolve) => proxy.close(() => resolve())))
    const port = (proxy.address() as { port: number }).port
    const service = new McpToolService({ id: 'builder', protocol: VERSION, tasks: true, transport: { url: `http://127.0.0.1:${port}${target.pathname}` } })
    onTestFinished(() => service.dispose())
    await service.connect()
    const call = service.execute('global', 'build', { ms: 1_500, label: 'mounted' }, contextWith(new AbortController().signal))
    const deadline = Date.now() + 5_000
    while (!started.includes('mounted') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(sockets.size).toBeGreaterThan(0)
    for (const socket of sockets) socket.destroy()
    expect(await call).toEqual({ success: true, content: [{ type: 'text', text: 'built mounted' }] })
    expect(aborted).not.toContain('mounted')
  })
})

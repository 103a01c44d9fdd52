import { randomUUID } from 'node:crypto'
import { connect, createServer, type Server, type Socket } from 'node:net'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import {
  capabilitySeamToken,
  createRoot,
  definePlugin,
  defineTool,
  type JournalEvent,
  type JournalStore,
  postgresJournal,
  type QuestionPort,
  type QuestionRequest,
  type Root,
  SeamIntegration,
} from 'seam-runtime'
import { beginTurn, rootWith } from '../../../test/kit.js'
import { serveHttp } from '../server/serve.js'
import { waitFor } from '../fixtures/test-helpers.js'
import { McpToolService } from './mcp-tool-service.js'
import type { McpToolServiceOptions } from './options.js'

/** The bodies the served roots really ran, and the ones aborted, by label. */
const started: string[] = []
const aborted: string[] = []

/** A `seam dev`-style served root: a slow task-capable tool, and one that asks for approval. */
const served = definePlugin({
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
      'deploy',
      defineTool({
        description: 'Deploys, once a person allows it.',
        input: z.object({ target: z.string() }),
        approval: 'always',
        task: 'optional',
        execute: ({ target }) => `deployed ${target}`,
      }),
    )
  },
})

/**
 * A TCP proxy in front of a served root: `cut()` drops every open connection, `outage(ms)` refuses
 * new ones that long, `retarget` moves new ones to another root; `methods` are the requests seen.
 */
async function proxyTo(url: string, options: { latencyMs?: number } = {}) {
  const upstream = new URL(url)
  const sockets = new Set<Socket>()
  const seen: string[] = []
  const methods: string[] = []
  const state = { port: Number(upstream.port) }
  const accept = (inbound: Socket) => {
    seen.push(String(state.port))
    // The methods of the requests that went through (each request names its own in `mcp-method`).
    inbound.on('data', (chunk: Buffer) => {
      for (const match of chunk.toString('latin1').matchAll(/^mcp-method: (\S+)/gim)) methods.push(match[1]!)
    })
    const outbound = connect(state.port, upstream.hostname)
    for (const socket of [inbound, outbound]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {})
    }
    inbound.pipe(outbound)
    // The server's bytes reach the client `latencyMs` late (in order), as over a slow link.
    const latency = options.latencyMs ?? 0
    if (latency === 0) outbound.pipe(inbound)
    else {
      outbound.on('data', (chunk: Buffer) => setTimeout(() => inbound.write(chunk), latency))
      outbound.on('end', () => setTimeout(() => inbound.end(), latency))
    }
  }
  let server: Server = createServer(accept)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const cut = () => {
    for (const socket of sockets) socket.destroy()
  }
  onTestFinished(() => {
    cut()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    seen,
    methods,
    cut,
    /** Points new connections at another served root. */
    retarget: (next: string) => {
      state.port = Number(new URL(next).port)
    },
    /** The listener goes away (every connection dropped, new ones refused) and comes back on the same port. */
    async outage(ms: number) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        cut()
      })
      await new Promise((resolve) => setTimeout(resolve, ms))
      server = createServer(accept)
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    },
  }
}

/** A served root on `journal` (memory unless given), over HTTP. */
async function servedRoot(journal?: JournalStore) {
  const root = await createRoot({ plugin: served, ...(journal ? { journal } : {}) })
  const http = await serveHttp(root, { port: 0 })
  onTestFinished(async () => {
    await http.close()
    await root.close()
  })
  return { root, url: http.url }
}

/** Another root that mounts `url` as `inner__*` with McpToolService. */
async function mountingRoot(url: string, options: Partial<McpToolServiceOptions> = {}) {
  const service = new McpToolService({ id: 'inner', prefix: 'inner', approval: 'never', protocol: '2026-07-28', transport: { url }, ...options })
  onTestFinished(() => service.dispose())
  const { root } = await rootWith((ctx) => {
    const seams = new SeamIntegration()
    seams.registerToolService('global', service)
    ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
  })
  return { root, service }
}

/** Every journal event about the call whose arguments carry `label` (the served side), or with `callId` (the mounting side). */
async function eventsOf(root: Root, match: (event: JournalEvent) => boolean): Promise<JournalEvent[]> {
  const found: JournalEvent[] = []
  for (const turn of (await root.journal.turns()).turns) found.push(...(await root.journal.read(turn.turnId)).filter(match))
  return found
}

const byCallId = (callId: string) => (event: JournalEvent) => (event.kind === 'tool/call' || event.kind === 'tool/result') && event.callId === callId

async function servedCallOf(root: Root, label: string): Promise<string[]> {
  const [call] = await eventsOf(root, (event) => event.kind === 'tool/call' && JSON.stringify(event).includes(label))
  if (call === undefined || call.kind !== 'tool/call') return []
  return (await eventsOf(root, byCallId(call.callId))).map((event) => (event.kind === 'tool/result' ? `${event.kind}:${event.status}` : event.kind))
}

/** Reads `read` until `done` holds (5 s at most), and returns the last read. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5_000
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('McpToolService follows a task-capable tool of a served root as a task', () => {
  it('completes a call whose connections were all dropped and whose listener was down mid-call, journaled once on each side', async () => {
    const inner = await servedRoot()
    const proxy = await proxyTo(inner.url)
    const { root } = await mountingRoot(proxy.url)
    const turn = await beginTurn(root)
    const call = turn.tools.execute({ callId: 'b1', name: 'inner__build', arguments: { ms: 1_500, label: 'outage' } })
    // Once the client holds the task handle (it polls): a drop before that would lose the handle itself.
    await waitFor('the first poll', () => started.includes('outage') && proxy.methods.includes('tasks/get'))
    await proxy.outage(400)
    const outcome = await call
    expect(outcome).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'built outage' }] })
    expect(started.filter((label) => label === 'outage')).toHaveLength(1)
    expect(aborted).not.toContain('outage')
    expect((await eventsOf(root, byCallId('b1'))).map((event) => event.kind)).toEqual(['tool/call', 'tool/result'])
    expect(await servedCallOf(inner.root, 'outage')).toEqual(['tool/call', 'tool/result:completed'])
    await turn.end()
  })

  it('cancels the task when the mounting turn aborts, even before its task handle arrived: the served body is aborted and its call closed', async () => {
    const inner = await servedRoot()
    // The abort lands while the handle is still on a slow link: the cancel waits for it.
    const proxy = await proxyTo(inner.url, { latencyMs: 200 })
    const { root } = await mountingRoot(proxy.url)
    const controller = new AbortController()
    const turn = await beginTurn(root, { signal: controller.signal })
    const call = turn.tools.execute({ callId: 'c1', name: 'inner__build', arguments: { ms: 30_000, label: 'cancelled' } })
    await waitFor('the served body to start', () => started.includes('cancelled'))
    expect(proxy.methods).not.toContain('tasks/get')
    controller.abort(new Error('the person stopped the turn'))
    expect(await call).toMatchObject({ status: 'cancelled' })
    await waitFor('the served body to be aborted', () => aborted.includes('cancelled'))
    expect(proxy.methods).toContain('tasks/cancel')
    expect(await until(() => servedCallOf(inner.root, 'cancelled'), (kinds) => kinds.length === 2)).toEqual(['tool/call', 'tool/result:cancelled'])
  })

  it('cancels the task at the call’s deadline: TOOL_TIMEOUT here, the served body aborted there', async () => {
    const inner = await servedRoot()
    const { root } = await mountingRoot(inner.url, { timeoutMs: 800 })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 't1', name: 'inner__build', arguments: { ms: 30_000, label: 'deadline' } })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT' })
    await waitFor('the served body to be aborted', () => aborted.includes('deadline'))
    await turn.end()
  })

  it('puts the task’s approval question to the mounting turn’s question port and delivers the answer with tasks/update', async () => {
    const inner = await servedRoot()
    const { root } = await mountingRoot(inner.url)
    const asked: QuestionRequest[] = []
    const port: QuestionPort = {
      async elicit(request) {
        asked.push(request)
        return { action: 'accept', content: { decision: 'once' } }
      },
    }
    const turn = await beginTurn(root, { ports: { question: port } })
    const outcome = await turn.tools.execute({ callId: 'd1', name: 'inner__deploy', arguments: { target: 'prod' } })
    expect(outcome).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'deployed prod' }] })
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ callId: 'd1', message: expect.stringContaining('Allow this tool call?'), schema: { properties: { decision: { enum: ['once', 'reject'] } } } })
    const questions = (await root.journal.read(turn.turnId)).filter((event) => event.kind.startsWith('question/'))
    expect(questions).toMatchObject([{ kind: 'question/asked', callId: 'd1' }, { kind: 'question/answered', callId: 'd1', action: 'accept' }])
    expect(await inner.root.approvals.pending()).toEqual([])
    await turn.end()
  })

  it('with tasks: false calls the same tool as a plain request, which a dropped connection fails', async () => {
    const inner = await servedRoot()
    const proxy = await proxyTo(inner.url)
    const { root } = await mountingRoot(proxy.url, { tasks: false })
    const turn = await beginTurn(root)
    const call = turn.tools.execute({ callId: 'p1', name: 'inner__build', arguments: { ms: 1_500, label: 'plain' } })
    await waitFor('the served body to start', () => started.includes('plain'))
    proxy.cut()
    expect(await call).toMatchObject({ status: 'failed' })
    await turn.end()
  })
})

const pgUrl = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: pgUrl, max: 1 })
afterAll(() => admin.end())

describe('a mounted task on two served roots sharing a PostgreSQL journal', () => {
  it('starts on host A, and after its connection dropped is polled on host B until the result host A journals', async () => {
    const schema = `seam_mount_tasks_${randomUUID().replaceAll('-', '').slice(0, 12)}`
    onTestFinished(() => admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).then(() => undefined))
    const a = await servedRoot(postgresJournal(pgUrl, { schema, hostId: 'host-a' }))
    const b = await servedRoot(postgresJournal(pgUrl, { schema, hostId: 'host-b' }))
    const proxy = await proxyTo(a.url)
    const { root } = await mountingRoot(proxy.url)
    const turn = await beginTurn(root)
    const call = turn.tools.execute({ callId: 'h1', name: 'inner__build', arguments: { ms: 1_500, label: 'failover' } })
    await waitFor('the first poll', () => started.includes('failover') && proxy.methods.includes('tasks/get'))
    // A load balancer's failover: every connection to A dropped, the next ones go to B.
    const before = proxy.seen.length
    proxy.retarget(b.url)
    proxy.cut()
    expect(await call).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'built failover' }] })
    expect(proxy.seen.slice(before).length).toBeGreaterThan(0)
    expect(new Set(proxy.seen.slice(before))).toEqual(new Set([new URL(b.url).port]))
    // The call ran once, on host A, and its result is in the shared journal, written by A.
    expect(started.filter((label) => label === 'failover')).toHaveLength(1)
    expect(await servedCallOf(b.root, 'failover')).toEqual(['tool/call', 'tool/result:completed'])
    const [served] = await eventsOf(b.root, (event) => event.kind === 'tool/call' && JSON.stringify(event).includes('failover'))
    expect(await eventsOf(b.root, (event) => event.kind === 'tool/result' && served?.kind === 'tool/call' && event.callId === served.callId)).toMatchObject([{ status: 'completed', host: 'host-a' }])
    expect((await eventsOf(root, byCallId('h1'))).map((event) => event.kind)).toEqual(['tool/call', 'tool/result'])
    await turn.end()
  })
})

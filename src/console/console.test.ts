import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../features/define-tool.js'
import { type ApprovalPort, deferApprovals } from '../seams/approval.js'
import { memoryJournal } from '../runtime/journal/memory.js'
import { definePlugin } from '../runtime/plugins/plugin.js'
import { createRoot } from '../index.js'
import { ConsoleApprovals } from './approvals.js'
import { createConsole } from './console.js'
import type { ApprovalQueueView, ParkedApprovalView, StateView, TryResult, TurnPage } from './types.js'

/** A root with `echo` (never asks), `wipe` (always asks) and `tag` (on-risk, no risk: asks), its console on a loopback port. */
async function consoleServer(token?: string, approval?: ApprovalPort, operator?: { operators: string[]; as: string }) {
  const approvals = new ConsoleApprovals()
  const plugin = definePlugin({
    name: 'root',
    setup(ctx) {
      ctx.addTool('echo', defineTool({ description: 'Echo.', input: z.object({ text: z.string() }), approval: 'never', execute: async ({ text }) => text }))
      ctx.addTool('wipe', defineTool({ description: 'Wipe.', input: z.object({}), approval: 'always', execute: async () => 'wiped' }))
      ctx.addTool('tag', defineTool({ description: 'Tag.', input: z.object({}), execute: async () => 'tagged' }))
    },
  })
  const root = await createRoot({ plugin, journal: memoryJournal(), approval: approval ?? approvals, operators: operator?.operators ?? [] })
  const web = createConsole(root, { approvals, ...(token ? { token } : {}), ...(operator ? { operator: operator.as } : {}) })
  const server = createServer((req, res) => {
    void web.handle(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  onTestFinished(async () => {
    web.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await root.close()
  })
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(origin + path, { method: 'POST', headers: { 'content-type': 'application/json', origin, ...headers }, body: JSON.stringify(body) })
  return { web, origin, post }
}

/** Opens the event stream, as an open page does; closed when the test finishes. */
async function openPage(origin: string): Promise<void> {
  const controller = new AbortController()
  const response = await fetch(`${origin}/api/events`, { signal: controller.signal })
  expect(response.headers.get('content-type')).toBe('text/event-stream')
  onTestFinished(() => controller.abort())
}

async function until<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (let tries = 0; tries < 200; tries += 1) {
    const value = await check()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('timed out')
}

describe('the console routes', () => {
  it('answers the state, the live catalog and journal pages, and journals a try-a-tool call as the named principal', async () => {
    const { origin, post } = await consoleServer()
    const state = (await (await fetch(`${origin}/api/state`)).json()) as StateView
    expect(state.generation).toBe(1)
    expect(state.timeline[0]).toMatchObject({ kind: 'generation', generation: 1 })
    const tried = (await (await post('/api/try', { tool: 'echo', arguments: '{"text":"hi"}', subjectId: 'ada' })).json()) as TryResult
    expect(tried.outcome).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'hi' }] })
    const page = (await (await fetch(`${origin}/api/turns?tool=echo`)).json()) as TurnPage
    expect(page.turns.map((turn) => [turn.turnId, turn.subjectId, turn.session])).toEqual([[tried.turnId, 'ada', 'console']])
    expect((await fetch(`${origin}/api/turns?limit=0`)).status).toBe(400)
    const html = await fetch(`${origin}/`)
    expect(html.headers.get('content-security-policy')).toContain("script-src 'self'")
  })

  it('fails an approval closed while no page is open, and settles it with the answer a page gives', async () => {
    const { origin, post } = await consoleServer()
    const unseen = (await (await post('/api/try', { tool: 'wipe', arguments: '{}', subjectId: 'ada' })).json()) as TryResult
    expect(unseen.outcome).toMatchObject({ status: 'denied', code: 'APPROVAL_UNAVAILABLE' })

    await openPage(origin)
    const asking = post('/api/try', { tool: 'wipe', arguments: '{}', subjectId: 'ada' })
    const [question] = await until(async () => {
      const { pending } = (await (await fetch(`${origin}/api/approvals`)).json()) as ApprovalQueueView
      return pending.length > 0 ? pending : undefined
    })
    expect(question).toMatchObject({ name: 'wipe', session: 'console' })
    expect((await post(`/api/approvals/${question!.id}`, { answer: 'maybe' })).status).toBe(400)
    expect((await post(`/api/approvals/${question!.id}`, { answer: 'allowed-once' })).status).toBe(200)
    expect(((await (await asking).json()) as TryResult).outcome).toMatchObject({ status: 'completed' })
    // The queue's version orders what the page hears by request and by event stream alike.
    const after = (await (await fetch(`${origin}/api/approvals`)).json()) as ApprovalQueueView
    expect(after.pending).toEqual([])
    expect(after.version).toBeGreaterThanOrEqual(2)
    // Answered already: a second answer changes nothing.
    expect((await post(`/api/approvals/${question!.id}`, { answer: 'rejected' })).status).toBe(409)
  })

  it('shows each question with the answers its call offers, and refuses an answer it did not offer', async () => {
    const { origin, post } = await consoleServer()
    await openPage(origin)
    const waiting = async (count: number) =>
      until(async () => {
        const { pending } = (await (await fetch(`${origin}/api/approvals`)).json()) as ApprovalQueueView
        return pending.length === count ? pending : undefined
      })
    const ask = (tool: string) => {
      const outcome = post('/api/try', { tool, arguments: '{}', subjectId: 'ada' }).then(async (res) => ((await res.json()) as TryResult).outcome)
      // A failing expectation below closes the server under it: that is the test's failure, not this one's.
      outcome.catch(() => {})
      return outcome
    }
    const wiping = ask('wipe')
    const [wipe] = await waiting(1)
    const tagging = ask('tag')
    const [, tag] = await waiting(2)
    expect(wipe).toMatchObject({ name: 'wipe', answers: ['allowed-once', 'rejected'] })
    expect(tag).toMatchObject({ name: 'tag', answers: ['allowed-once', 'allowed-session', 'rejected'] })

    const refused = await post(`/api/approvals/${wipe!.id}`, { answer: 'allowed-session' })
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: string }).error).toBe('wipe offers allowed-once or rejected, not allowed-session')
    // Refused, the question still waits for an answer it offers.
    expect((await post(`/api/approvals/${wipe!.id}`, { answer: 'allowed-once' })).status).toBe(200)
    await expect(wiping).resolves.toMatchObject({ status: 'completed' })
    expect((await post(`/api/approvals/${tag!.id}`, { answer: 'allowed-session' })).status).toBe(200)
    await expect(tagging).resolves.toMatchObject({ status: 'completed' })
  })

  it('lists calls parked in the journal and decides them once, as the console', async () => {
    const { origin, post } = await consoleServer(undefined, deferApprovals())
    const tried = (await (await post('/api/try', { tool: 'wipe', arguments: '{}', subjectId: 'ada' })).json()) as TryResult
    expect(tried.outcome).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING' })
    const [parked] = (await (await fetch(`${origin}/api/parked`)).json()) as ParkedApprovalView[]
    expect(parked).toMatchObject({ tool: 'wipe', principal: 'ada', session: 'console', turnId: tried.turnId })
    const decided = (await (await post(`/api/parked/${tried.turnId}/${parked!.callId}`, { answer: 'allowed-once' })).json()) as ParkedApprovalView
    expect(decided.decision).toMatchObject({ answer: 'allowed-once', by: 'console' })
    expect((await post(`/api/parked/${tried.turnId}/${parked!.callId}`, { answer: 'rejected' })).status).toBe(409)
    expect((await post(`/api/parked/${tried.turnId}/no-such-call`, { answer: 'rejected' })).status).toBe(404)
  })

  it('lists parked calls without their resume tokens, unless the host names the console an operator', async () => {
    const plain = await consoleServer(undefined, deferApprovals())
    const tried = (await (await plain.post('/api/try', { tool: 'wipe', arguments: '{}', subjectId: 'ada' })).json()) as TryResult
    const [listed] = (await (await fetch(`${plain.origin}/api/parked`)).json()) as ParkedApprovalView[]
    expect(listed).toMatchObject({ tool: 'wipe', principal: 'ada' })
    expect(listed).not.toHaveProperty('resumeToken')
    const decided = (await (await plain.post(`/api/parked/${tried.turnId}/${listed!.callId}`, { answer: 'allowed-once' })).json()) as ParkedApprovalView
    expect(decided).not.toHaveProperty('resumeToken')

    // Naming itself an operator is not enough: the root must list it among its operators.
    const pretender = await consoleServer(undefined, deferApprovals(), { operators: [], as: 'ops' })
    await pretender.post('/api/try', { tool: 'wipe', arguments: '{}', subjectId: 'ada' })
    expect(((await (await fetch(`${pretender.origin}/api/parked`)).json()) as ParkedApprovalView[])[0]).not.toHaveProperty('resumeToken')

    const operator = await consoleServer(undefined, deferApprovals(), { operators: ['ops'], as: 'ops' })
    await operator.post('/api/try', { tool: 'wipe', arguments: '{}', subjectId: 'ada' })
    const [shown] = (await (await fetch(`${operator.origin}/api/parked`)).json()) as ParkedApprovalView[]
    expect(shown!.resumeToken).toEqual(expect.any(String))
  })

  it('lists each parked call with the answers its call offered, and refuses another with 400, leaving it parked', async () => {
    const { origin, post } = await consoleServer(undefined, deferApprovals())
    for (const tool of ['wipe', 'tag']) await post('/api/try', { tool, arguments: '{}', subjectId: 'ada' })
    const parkedCalls = async () => (await (await fetch(`${origin}/api/parked`)).json()) as ParkedApprovalView[]
    const [wipe, tag] = await parkedCalls()
    expect(wipe).toMatchObject({ tool: 'wipe', answers: ['allowed-once', 'rejected'] })
    expect(tag).toMatchObject({ tool: 'tag', answers: ['allowed-once', 'allowed-session', 'rejected'] })

    const refused = await post(`/api/parked/${wipe!.turnId}/${wipe!.callId}`, { answer: 'allowed-session' })
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: string }).error).toBe(`the call "${wipe!.callId}" to wipe offers allowed-once or rejected, not allowed-session; it is still waiting`)
    // Refused, the call is still parked and undecided, and takes an answer it offers.
    expect((await parkedCalls()).find((p) => p.tool === 'wipe')).toEqual(wipe)
    expect((await post(`/api/parked/${wipe!.turnId}/${wipe!.callId}`, { answer: 'allowed-once' })).status).toBe(200)
    expect((await post(`/api/parked/${tag!.turnId}/${tag!.callId}`, { answer: 'allowed-session' })).status).toBe(200)
  })

  it('refuses a state change from another origin, without an Origin, or sent as a form', async () => {
    const { post } = await consoleServer()
    const body = { tool: 'echo', arguments: '{"text":"x"}', subjectId: 'mallory' }
    expect((await post('/api/try', body, { origin: 'http://evil.example' })).status).toBe(403)
    expect((await post('/api/try', body, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await post('/api/try', body, { 'content-type': 'text/plain' })).status).toBe(415)
  })

  it('with a token, needs the one-time login (spent on first use) or the bearer token', async () => {
    const { web, origin } = await consoleServer('s3cret')
    expect((await fetch(`${origin}/api/state`)).status).toBe(401)
    expect((await fetch(`${origin}/`)).status).toBe(401)
    expect((await fetch(`${origin}/api/state`, { headers: { authorization: 'Bearer s3cret' } })).status).toBe(200)
    expect((await fetch(`${origin}/api/state`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401)
    const login = web.loginPath()
    expect(login).toMatch(/^\/login\?code=/)
    const first = await fetch(origin + login, { redirect: 'manual' })
    expect(first.status).toBe(303)
    const cookie = first.headers.get('set-cookie')!
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/)
    expect((await fetch(`${origin}/api/state`, { headers: { cookie: cookie.split(';')[0]! } })).status).toBe(200)
    expect((await fetch(origin + login, { redirect: 'manual' })).status).toBe(401)
  })
})

import { describe, expect, it, onTestFinished } from 'vitest'
import { capabilitySeamToken, type ProgressEvent, type QuestionPort, type QuestionRequest, SeamIntegration } from 'seam-runtime'
import { beginTurn, rootWith } from '../../../test/kit.js'
import { everythingTransport, fixtureTransport } from '../fixtures/test-helpers.js'
import { McpToolService } from './mcp-tool-service.js'

/** A root whose only tools are `service`'s, and every progress report it hears. */
async function mounted(service: McpToolService) {
  onTestFinished(() => service.dispose())
  await service.connect()
  const { root } = await rootWith((ctx) => {
    const seams = new SeamIntegration()
    seams.registerToolService('global', service)
    ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
  }, { defaults: { graceMs: 100 } })
  const heard: ProgressEvent[] = []
  root.on('progress', (event) => heard.push(event))
  return { root, heard }
}

describe.each(['2025-11-25', '2026-07-28'] as const)('a mounted server’s progress (%s)', (protocol) => {
  it('reaches the turn and extends the deadline past timeoutMs, then stops at maxTimeoutMs', async () => {
    const service = new McpToolService({ id: 'fixture', transport: fixtureTransport(undefined, { eras: true }), protocol, timeoutMs: 600, maxTimeoutMs: 1_500, approval: 'never' })
    const { root, heard } = await mounted(service)
    expect(service.protocolVersion).toBe(protocol)
    const turn = await beginTurn(root)
    // 1 s of work, a report every 150 ms: well past the 600 ms deadline, each gap inside it.
    const long = await turn.tools.execute({ callId: 'c1', name: 'ticking', arguments: { ms: 1_000, every: 150 } })
    expect(long).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'ticked 7' }] })
    expect(long.durationMs).toBeGreaterThan(1_000)
    expect(heard.filter((e) => e.callId === 'c1').map((e) => e.done)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(heard[0]).toMatchObject({ name: 'ticking', total: 7, message: 'tick 1', turnId: turn.turnId })

    // 5 s of reports: extended again and again, but cut at 1.5 s from the start.
    const capped = await turn.tools.execute({ callId: 'c2', name: 'ticking', arguments: { ms: 5_000, every: 150 } })
    expect(capped).toMatchObject({ status: 'failed' })
    expect(capped.code).toBe('TOOL_TIMEOUT')
    expect(capped.durationMs).toBeGreaterThanOrEqual(1_450)
    expect(capped.durationMs).toBeLessThan(3_000)

    // Silent work is cut at timeoutMs.
    const silent = await turn.tools.execute({ callId: 'c3', name: 'slow', arguments: { ms: 5_000 } })
    expect(silent).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT' })
    expect(silent.durationMs).toBeLessThan(1_400)
    await turn.end()
  })
})

describe('McpToolService progress tokens', () => {
  it('always sends one: a server that reports only when given a token reports to a caller that set no listener', async () => {
    const service = new McpToolService({ id: 'fixture', transport: fixtureTransport(), timeoutMs: 5_000 })
    onTestFinished(() => service.dispose())
    await service.connect()
    const reports: unknown[] = []
    const context = { callId: 'c', turnId: 't', session: 's', principal: { subjectId: 'u', roles: [] }, generation: 1, owner: 'root', signal: new AbortController().signal }
    const result = await service.execute('global', 'ticking', { ms: 300, every: 100 }, { ...context, progress: (p) => reports.push(p) })
    expect(result).toMatchObject({ success: true, content: [{ type: 'text', text: 'ticked 3' }] })
    expect(reports).toEqual([
      { done: 1, total: 3, message: 'tick 1' },
      { done: 2, total: 3, message: 'tick 2' },
      { done: 3, total: 3, message: 'tick 3' },
    ])
    // And without a progress port in the context the token is still sent (the server saw one).
    const bare = await service.execute('global', 'ticking', { ms: 100, every: 100 }, context)
    expect(bare).toMatchObject({ success: true, content: [{ type: 'text', text: 'ticked 1' }] })
  })

  it('extends a call to the reference everything server’s long-running operation past timeoutMs', async () => {
    const service = new McpToolService({ id: 'everything', transport: everythingTransport(), timeoutMs: 500, maxTimeoutMs: 5_000, approval: 'never' })
    const { root, heard } = await mounted(service)
    const turn = await beginTurn(root)
    // 1.2 s in 4 steps of 300 ms: each report restarts the 500 ms deadline.
    const outcome = await turn.tools.execute({ callId: 'e1', name: 'trigger-long-running-operation', arguments: { duration: 1.2, steps: 4 } })
    expect(outcome).toMatchObject({ status: 'completed' })
    expect(outcome.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Long running operation completed') })
    // The last report comes just before the result, in the same read (see `keepProgressOrder`).
    expect(heard.map((e) => [e.done, e.total])).toEqual([[1, 4], [2, 4], [3, 4], [4, 4]])
    await turn.end()
  })

  it('refuses a maxTimeoutMs below timeoutMs', () => {
    expect(() => new McpToolService({ id: 'x', transport: fixtureTransport(), timeoutMs: 1_000, maxTimeoutMs: 500 })).toThrow(/maxTimeoutMs/)
  })
})

describe('a mounted server’s questions', () => {
  it('reach the turn’s question port as the call’s own ctx.ask, journaled, with every field shape the everything server asks', async () => {
    const service = new McpToolService({ id: 'everything', transport: everythingTransport(), approval: 'never' })
    onTestFinished(() => service.dispose())
    await service.connect()
    const { root } = await rootWith((ctx) => {
      const seams = new SeamIntegration()
      seams.registerToolService('global', service)
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const asked: QuestionRequest[] = []
    const port: QuestionPort = {
      async elicit(request) {
        asked.push(request)
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.org', untitledMultipleSelectEnum: ['Piano'] } }
      },
    }
    const turn = await beginTurn(root, { ports: { question: port } })
    const outcome = await turn.tools.execute({ callId: 'q1', name: 'trigger-elicitation-request', arguments: {} })
    expect(outcome).toMatchObject({ status: 'completed' })
    expect(asked).toHaveLength(1)
    const kinds = Object.values(asked[0]!.schema.properties).map((f) => f.type)
    expect(new Set(kinds)).toEqual(new Set(['string', 'boolean', 'integer', 'number', 'array']))
    // The server saw the checked answer, defaults filled (its integer default is 42).
    const text = JSON.stringify(outcome.content)
    expect(text).toContain('Ada Lovelace')
    expect(text).toContain('42')
    const events = (await root.journal.read(turn.turnId)).filter((e) => e.kind.startsWith('question/'))
    expect(events.map((e) => e.kind)).toEqual(['question/asked', 'question/answered'])
    expect(events[1]).toMatchObject({ callId: 'q1', action: 'accept' })
    await turn.end()
  })
})

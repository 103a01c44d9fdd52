import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { SpanStatusCode } from '@opentelemetry/api'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { createRoot, deferApprovals, defineTool, openTelemetry, type PluginContext, sqliteJournal } from 'seam-runtime'
import { beginTurn, rootWith, sleep } from '../../test/kit.js'
import { everything, memorySdk, parentOf } from '../../test/telemetry-kit.js'

const lookup = defineTool({
  description: 'Look up a ticket.',
  input: z.object({ id: z.string(), apiKey: z.string().optional() }),
  approval: 'never',
  isConcurrencySafe: () => true,
  execute: async ({ id }) => ({ id, title: 'Printer on fire', token: 'result-secret-7' }),
})

function tools(ctx: PluginContext): void {
  ctx.addTool('lookup', lookup)
  ctx.addTool('delete_ticket', defineTool({ description: 'Delete a ticket.', input: z.object({ id: z.string() }), approval: 'always', execute: () => ({ deleted: true }) }))
  ctx.addTool('slow', defineTool({ description: 'Takes its time.', input: z.object({}), approval: 'never', timeoutMs: 20, execute: () => sleep(150) }))
  ctx.addTool('crawl', defineTool({
    description: 'Reports progress.',
    input: z.object({}),
    approval: 'never',
    async execute(_args, ctx) {
      ctx.progress({ done: 0, total: 2, message: 'starting' })
      await sleep(120)
      ctx.progress({ done: 1, total: 2 })
      await sleep(120)
      ctx.progress({ done: 2, total: 2, message: 'done' })
      return 'crawled'
    },
  }))
  ctx.guards.add((exec) => (exec.name === 'lookup' && exec.arguments.id === 'T-0' ? 'ticket T-0 is sealed' : undefined))
}

async function telemetryRoot(options: Parameters<typeof openTelemetry>[0] = {}, approval?: 'allowed-once' | 'rejected') {
  const sdk = memorySdk()
  const telemetry = openTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider, host: 'test-host', ...options })
  const { root } = await rootWith(tools, {
    telemetry,
    defaults: { graceMs: 20 },
    approval: approval ? { request: async () => approval } : undefined,
  })
  return { sdk, root }
}

/** The turn span ends once its calls have settled, just after `turn.end()` resolves. */
async function ended(sdk: ReturnType<typeof memorySdk>) {
  for (let i = 0; i < 50 && !sdk.spans().some((s) => s.name === 'seam.turn'); i += 1) await sleep(2)
  return sdk.span('seam.turn')
}

describe('openTelemetry: spans', () => {
  it('makes one execute_tool span per call of a batch, children of the turn span, started in model order', async () => {
    const { sdk, root } = await telemetryRoot()
    const turn = await beginTurn(root, { session: 'chat-9' })
    await turn.tools.executeBatch([
      { callId: 'c1', name: 'lookup', arguments: '{"id":"T-1"}' },
      { callId: 'c2', name: 'lookup', arguments: '{"id":"T-2"}' },
      { callId: 'c3', name: 'lookup', arguments: '{"id":"T-3"}' },
    ])
    await turn.end()
    const turnSpan = await ended(sdk)
    expect(turnSpan.attributes).toMatchObject({ 'seam.turn.id': turn.turnId, 'gen_ai.conversation.id': 'chat-9', 'seam.generation': 1, 'seam.owner': 'root' })
    const calls = sdk.spans().filter((s) => s.name === 'execute_tool lookup')
    expect(calls).toHaveLength(3)
    for (const span of calls) {
      expect(parentOf(span)).toBe(turnSpan.spanContext().spanId)
      expect(span.spanContext().traceId).toBe(turnSpan.spanContext().traceId)
    }
    const byStart = [...calls].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
    expect(byStart.map((s) => s.attributes['gen_ai.tool.call.id'])).toEqual(['c1', 'c2', 'c3'])
    expect(calls[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.type': 'function',
      'seam.generation': 1,
      'seam.outcome.status': 'completed',
      'seam.source': 'addTool(root)',
      'seam.host': 'test-host',
    })
    expect(calls[0]!.status.code).toBe(SpanStatusCode.UNSET)
  })

  it('marks a guard denial with an event and the policy, without an error status', async () => {
    const { sdk, root } = await telemetryRoot()
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'lookup', arguments: '{"id":"T-0"}' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'DENIED', policy: 'guard' })
    const span = sdk.span('execute_tool lookup')
    expect(span.attributes).toMatchObject({ 'seam.outcome.status': 'denied', 'seam.outcome.code': 'DENIED', 'seam.policy': 'guard' })
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([['seam.guard.denied', { 'seam.reason': 'ticket T-0 is sealed' }]])
    expect(span.status.code).toBe(SpanStatusCode.UNSET)
  })

  it('records the approval question and the answer with its wait', async () => {
    const { sdk, root } = await telemetryRoot({}, 'rejected')
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'delete_ticket', arguments: '{"id":"T-1"}' })
    const span = sdk.span('execute_tool delete_ticket')
    expect(span.events.map((e) => e.name)).toEqual(['seam.approval.asked', 'seam.approval.decided'])
    expect(span.events[1]!.attributes).toMatchObject({ 'seam.approval.decision': 'rejected', 'seam.approval.wait_ms': expect.any(Number) })
    expect(span.attributes).toMatchObject({ 'seam.outcome.code': 'DENIED', 'seam.policy': 'approval' })
  })

  it('traces a parked call resumed through root.resume, in a turn span of the parked turn', async () => {
    const sdk = memorySdk()
    const telemetry = openTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider, host: 'test-host' })
    const { root } = await rootWith(tools, { telemetry, approval: deferApprovals() })
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute({ callId: 'c1', name: 'delete_ticket', arguments: '{"id":"T-1"}' })
    expect(parked).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING' })
    await turn.end()
    await root.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    expect(await root.resume(parked.resumeToken!, { principal: 'user-1' })).toMatchObject({ status: 'completed' })
    for (let i = 0; i < 50 && sdk.spans().filter((s) => s.name === 'seam.turn').length < 2; i += 1) await sleep(2)
    const turns = sdk.spans().filter((s) => s.name === 'seam.turn')
    expect(turns.map((s) => s.attributes['seam.turn.id'])).toEqual([turn.turnId, turn.turnId])
    const calls = sdk.spans().filter((s) => s.name === 'execute_tool delete_ticket')
    expect(calls.map((s) => s.attributes['seam.outcome.status'])).toEqual(['suspended', 'completed'])
    expect(parentOf(calls[1]!)).toBe(turns[1]!.spanContext().spanId)
  })

  it('records each progress report observers heard as a span event on the call span', async () => {
    const { sdk, root } = await telemetryRoot()
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 'crawl', arguments: '{}' })).toMatchObject({ status: 'completed' })
    const span = sdk.span('execute_tool crawl')
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
      ['seam.tool.progress', { 'seam.progress.done': 0, 'seam.progress.total': 2, 'seam.progress.message': 'starting' }],
      ['seam.tool.progress', { 'seam.progress.done': 1, 'seam.progress.total': 2 }],
      ['seam.tool.progress', { 'seam.progress.done': 2, 'seam.progress.total': 2, 'seam.progress.message': 'done' }],
    ])
  })

  it('marks a timeout and the abandoned body, with the error status', async () => {
    const { sdk, root } = await telemetryRoot()
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    expect(outcome.code).toBe('TOOL_TIMEOUT')
    const span = sdk.span('execute_tool slow')
    expect(span.events.map((e) => e.name)).toEqual(['seam.tool.timeout', 'seam.tool.abandoned'])
    expect(span.events[0]!.attributes).toEqual({ 'seam.timeout_ms': 20 })
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TOOL_TIMEOUT' })
    expect(span.attributes).toMatchObject({ 'error.type': 'TOOL_TIMEOUT', 'seam.outcome.status': 'failed' })
    expect(await sdk.points('seam.tool.abandoned.active')).toEqual([expect.objectContaining({ value: 1 })])
    await sleep(200)
    expect(await sdk.points('seam.tool.abandoned.active')).toEqual([expect.objectContaining({ value: 0 })])
  })
})

describe('openTelemetry: arguments and results', () => {
  const call = { callId: 'c1', name: 'lookup', arguments: '{"id":"T-1","apiKey":"sk-live-123"}' }

  it('records neither by default', async () => {
    const { sdk, root } = await telemetryRoot()
    const turn = await beginTurn(root)
    await turn.tools.execute(call)
    await turn.end()
    await ended(sdk)
    const text = everything(sdk.spans())
    expect(text).not.toContain('sk-live-123')
    expect(text).not.toContain('T-1')
    expect(text).not.toContain('result-secret-7')
    expect(sdk.span('execute_tool lookup').attributes).not.toHaveProperty('gen_ai.tool.call.arguments')
  })

  it('takes its options as the root option itself: createRoot({ telemetry: { recordArguments } })', async () => {
    const sdk = memorySdk()
    const { root } = await rootWith(tools, { telemetry: { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider, recordArguments: true } })
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'lookup', arguments: '{"id":"T-7"}' })
    await turn.end()
    await ended(sdk)
    expect(sdk.span('execute_tool lookup').attributes['gen_ai.tool.call.arguments']).toBe('{"id":"T-7"}')
    await expect(rootWith(tools, { telemetry: 'yes' as never })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' })
  })

  it('records both when asked, with secrets redacted and sizes bounded as in the journal', async () => {
    const { sdk, root } = await telemetryRoot({ recordArguments: true, recordResults: true, maxPayloadBytes: 256 })
    const turn = await beginTurn(root)
    await turn.tools.execute(call)
    await turn.tools.execute({ callId: 'c2', name: 'lookup', arguments: JSON.stringify({ id: 'x'.repeat(1000) }) })
    const [first, second] = sdk.spans().filter((s) => s.name === 'execute_tool lookup')
    expect(JSON.parse(String(first!.attributes['gen_ai.tool.call.arguments']))).toEqual({ id: 'T-1', apiKey: '[redacted]' })
    expect(JSON.parse(String(first!.attributes['gen_ai.tool.call.result']))).toEqual({ id: 'T-1', title: 'Printer on fire', token: '[redacted]' })
    expect(everything(sdk.spans())).not.toContain('sk-live-123')
    expect(everything(sdk.spans())).not.toContain('result-secret-7')
    const bounded = String(second!.attributes['gen_ai.tool.call.arguments'])
    expect(Buffer.byteLength(bounded)).toBeLessThanOrEqual(256)
    expect(bounded).toMatch(/…\[truncated: 1009 bytes, sha256:[0-9a-f]{64}\]$/)
  })
})

describe('openTelemetry: metrics', () => {
  it('counts a known workload by tool, status and code', async () => {
    const { sdk, root } = await telemetryRoot({}, 'allowed-once')
    const turn = await beginTurn(root)
    await turn.tools.executeBatch([
      { callId: 'c1', name: 'lookup', arguments: '{"id":"T-1"}' },
      { callId: 'c2', name: 'lookup', arguments: '{"id":"T-2"}' },
      { callId: 'c3', name: 'lookup', arguments: '{"id":"T-0"}' },
    ])
    await turn.tools.execute({ callId: 'c4', name: 'delete_ticket', arguments: '{"id":"T-1"}' })
    await turn.tools.execute({ callId: 'c5', name: 'nope', arguments: '{}' })
    const outcomes = (await sdk.points<number>('seam.tool.call.outcomes')).map((p) => [p.attributes['gen_ai.tool.name'], p.attributes['seam.outcome.code'], p.value])
    expect(outcomes).toEqual(
      expect.arrayContaining([
        ['lookup', 'OK', 2],
        ['lookup', 'DENIED', 1],
        ['delete_ticket', 'OK', 1],
        ['nope', 'UNKNOWN_TOOL', 1],
      ]),
    )
    expect(outcomes).toHaveLength(4)
    const durations = await sdk.points<{ count: number }>('seam.tool.call.duration')
    const completedLookups = durations.find((p) => p.attributes['gen_ai.tool.name'] === 'lookup' && p.attributes['seam.outcome.status'] === 'completed')
    expect(completedLookups?.value.count).toBe(2)
    const waits = await sdk.points<{ count: number }>('seam.approval.wait.duration')
    expect(waits.map((p) => [p.attributes['seam.approval.decision'], p.value.count])).toEqual([['allowed-once', 1]])
    expect((await sdk.points<number>('seam.tool.calls.active')).map((p) => p.value)).toEqual([0])
    // Five calls, two appends each (tool/call, tool/result) plus the approval's two.
    const appends = await sdk.points<{ count: number }>('seam.journal.append.duration')
    expect(appends.reduce((sum, p) => sum + p.value.count, 0)).toBe(12)
    expect((await sdk.points<number>('seam.generation')).map((p) => p.value)).toEqual([1])
  })
})

describe('openTelemetry: reloads and the journal', () => {
  async function pluginDir(): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-otel-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await mkdir(path.join(dir, 'tools'))
    await writeFile(
      path.join(dir, 'tools', 'ping.ts'),
      "import { defineTool } from 'seam-runtime'\nexport default defineTool({ description: 'Ping.', input: { type: 'object' }, approval: 'never', execute: () => 'pong' })\n",
    )
    return dir
  }

  it('makes a span per reload with its phases, and an error status when the reload rolls back', async () => {
    const dir = await pluginDir()
    const sdk = memorySdk()
    const root = await createRoot({ dir, telemetry: openTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider }) })
    onTestFinished(() => root.close())
    const first = sdk.span('seam.reload')
    expect(first.attributes).toMatchObject({ 'seam.reload.ok': true, 'seam.generation': 1 })
    const phases = sdk.spans().filter((s) => parentOf(s) === first.spanContext().spanId)
    expect(phases.map((s) => [s.name, s.attributes['seam.file']])).toEqual([
      ['seam.reload.setup', undefined],
      ['seam.reload.bundle', path.join('tools', 'ping.ts')],
      ['seam.reload.evaluate', path.join('tools', 'ping.ts')],
      ['seam.reload.project', undefined],
      ['seam.reload.publish', undefined],
    ])
    await writeFile(path.join(dir, 'tools', 'ping.ts'), 'export default {')
    const result = await root.reload()
    expect(result.ok).toBe(false)
    const failed = sdk.spans().filter((s) => s.name === 'seam.reload')[1]!
    expect(failed.status.code).toBe(SpanStatusCode.ERROR)
    expect(failed.attributes).toMatchObject({ 'seam.reload.ok': false, 'error.type': 'RELOAD_FAILED' })
    const reloads = await sdk.points<{ count: number }>('seam.reload.duration')
    expect(reloads.map((p) => [p.attributes['seam.reload.ok'], p.value.count])).toEqual([
      [true, 1],
      [false, 1],
    ])
  })

  it('reports the size of each group commit of a SQLite journal', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-otel-journal-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const sdk = memorySdk()
    const { root } = await rootWith(tools, {
      journal: sqliteJournal(path.join(dir, 'journal.db')),
      telemetry: openTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider }),
    })
    const turn = await beginTurn(root)
    await turn.tools.executeBatch([
      { callId: 'c1', name: 'lookup', arguments: '{"id":"T-1"}' },
      { callId: 'c2', name: 'lookup', arguments: '{"id":"T-2"}' },
    ])
    await turn.end()
    // turn/begin, two tool/call and tool/result pairs, turn/end: six events, however they were grouped.
    const [commits] = await sdk.points<{ count: number; sum: number }>('seam.journal.commit.size')
    expect(commits?.value.sum).toBe(6)
    expect(commits?.value.count).toBeLessThanOrEqual(6)
  })
})

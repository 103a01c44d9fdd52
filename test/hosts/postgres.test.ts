import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { postgresJournal, type JournalEvent, type ToolCallOutcome } from 'seam-runtime'
import { type HostProcess, startHost } from './hosts.js'
import { sleep } from '../kit.js'

const url = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: url, max: 2 })
afterAll(() => admin.end())

/** A schema and a run log of the test's own; the schema is dropped when the test ends. */
function journal(): { schema: string; runLog: string; runs: (tool?: string) => string[]; events: (turnId: string) => Promise<JournalEvent[]> } {
  const schema = `seam_hosts_${randomUUID().replaceAll('-', '').slice(0, 16)}`
  const dir = mkdtempSync(join(tmpdir(), 'seam-hosts-'))
  const runLog = join(dir, 'runs.log')
  writeFileSync(runLog, '')
  const reader = postgresJournal(url, { schema, hostId: 'test-reader' })
  onTestFinished(async () => {
    await reader.close()
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    schema,
    runLog,
    runs: (tool) => readFileSync(runLog, 'utf8').split('\n').filter((line) => line !== '' && (tool === undefined || line.startsWith(`${tool} `))),
    events: (turnId) => reader.read(turnId),
  }
}

function hosts(j: { schema: string; runLog: string }, ids: string[], options: { leaseMs?: number; description?: string } = {}): Promise<HostProcess[]> {
  return Promise.all(ids.map((hostId) => startHost({ journal: url, schema: j.schema, hostId, runLog: j.runLog, ...options })))
}

const results = (events: readonly JournalEvent[]) => events.filter((event) => event.kind === 'tool/result')

describe('several host processes on one PostgreSQL journal', { timeout: 60_000 }, () => {
  it('repairs the call of a host killed mid-call from the live hosts, once, after its lease', async () => {
    const j = journal()
    const [a, b, c] = await hosts(j, ['host-a', 'host-b', 'host-c'], { leaseMs: 900 })
    const turnId = await a!.request<string>('turnId')
    void a!.request('execute', { callId: 'c1', name: 'hang' }).catch(() => undefined)
    while (j.runs('hang').length === 0) await sleep(10)
    await a!.kill()
    const killedAt = Date.now()
    let events = await j.events(turnId)
    while (results(events).length === 0 && Date.now() - killedAt < 10_000) {
      await sleep(50)
      events = await j.events(turnId)
    }
    const repairedAfter = Date.now() - killedAt
    expect(results(events)).toEqual([expect.objectContaining({ callId: 'c1', code: 'OUTCOME_UNKNOWN' })])
    expect(['host-b', 'host-c']).toContain(results(events)[0]!.host)
    // Within the lease and one beat of a live host (a third of its lease), with slack for a busy machine.
    expect(repairedAfter).toBeLessThan(900 + 300 + 2000)
    // Both live hosts keep beating and repairing: still one result.
    await Promise.all([b!.request('repair'), c!.request('repair')])
    expect(results(await j.events(turnId))).toHaveLength(1)
  })

  it('runs a call parked on A, decided on B and resumed on C once, with one tool/result', async () => {
    const j = journal()
    const [a, b, c] = await hosts(j, ['host-a', 'host-b', 'host-c'])
    const parked = await a!.request<ToolCallOutcome>('execute', { callId: 'c1', name: 'note', args: { text: 'hi' } })
    expect(parked).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING' })
    await b!.request('decide', { callId: 'c1', answer: 'allowed-once', by: 'ann' })
    await expect(c!.request('decide', { callId: 'c1', answer: 'rejected', by: 'bob' })).rejects.toMatchObject({ code: 'APPROVAL_CONFLICT' })
    expect(await c!.request<ToolCallOutcome>('resume', { token: parked.resumeToken })).toMatchObject({ status: 'completed', value: 'noted hi' })
    expect(j.runs('note')).toHaveLength(1)
    const turnId = await a!.request<string>('turnId')
    expect(results(await j.events(turnId))).toEqual([expect.objectContaining({ callId: 'c1', status: 'completed', host: 'host-c' })])
  })

  it('refuses a resume from another host by another principal or session, and runs it only for its own caller', async () => {
    const j = journal()
    const [a, b, c] = await hosts(j, ['host-a', 'host-b', 'host-c'])
    const parked = await a!.request<ToolCallOutcome>('execute', { callId: 'c1', name: 'note', args: { text: 'hi' } })
    await b!.request('decide', { callId: 'c1', answer: 'allowed-once', by: 'ann' })
    await expect(c!.request('resume', { token: parked.resumeToken, principal: 'mallory' })).rejects.toMatchObject({ code: 'APPROVAL_FORBIDDEN' })
    await expect(c!.request('turnResume', { token: parked.resumeToken, session: 's2' })).rejects.toMatchObject({ code: 'APPROVAL_FORBIDDEN' })
    expect(await c!.request('pending', { as: 'mallory' })).toEqual([expect.not.objectContaining({ resumeToken: expect.anything() })])
    expect(j.runs('note')).toEqual([])
    expect(await c!.request<ToolCallOutcome>('turnResume', { token: parked.resumeToken, session: 's1' })).toMatchObject({ status: 'completed', value: 'noted hi' })
    await expect(b!.request('resume', { token: parked.resumeToken, principal: 'mallory' })).rejects.toMatchObject({ code: 'APPROVAL_FORBIDDEN' })
    expect(j.runs('note')).toHaveLength(1)
  })

  it('runs the body once when two hosts race to resume the same call', async () => {
    const j = journal()
    const [a, b, c] = await hosts(j, ['host-a', 'host-b', 'host-c'])
    const parked = await a!.request<ToolCallOutcome>('execute', { callId: 'c1', name: 'note', args: { text: 'hi' } })
    await a!.request('decide', { callId: 'c1', answer: 'allowed-once' })
    const outcomes = await Promise.all([b!.request<ToolCallOutcome>('resume', { token: parked.resumeToken }), c!.request<ToolCallOutcome>('resume', { token: parked.resumeToken })])
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['completed', 'completed'])
    expect(j.runs('note')).toHaveLength(1)
    expect(results(await j.events(await a!.request<string>('turnId')))).toHaveLength(1)
  })

  it('runs 10 bodies for 100 concurrent calls with 10 idempotency keys across three hosts', async () => {
    const j = journal()
    const all = await hosts(j, ['host-a', 'host-b', 'host-c'])
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        all[index % 3]!.request<ToolCallOutcome>('execute', { session: `s${index % 7}`, callId: `c${index}`, name: 'charge', args: { order: `o-${index % 10}` } }),
      ),
    )
    expect(j.runs('charge')).toHaveLength(10)
    for (const [index, outcome] of outcomes.entries()) {
      expect(outcome.status).toBe('completed')
      expect(outcome.value).toEqual(outcomes[index % 10]!.value)
    }
  })

  it('keeps a parked call through a restart of every host, then resumes it on a new one', async () => {
    const j = journal()
    const first = await hosts(j, ['host-a', 'host-b'])
    const parked = await first[0]!.request<ToolCallOutcome>('execute', { callId: 'c1', name: 'note', args: { text: 'hi' } })
    const turnId = await first[0]!.request<string>('turnId')
    await Promise.all(first.map((host) => host.kill()))
    const [c, d] = await hosts(j, ['host-c', 'host-d'], { leaseMs: 300 })
    await sleep(400)
    await c!.request('repair')
    expect(await d!.request('pending')).toEqual([expect.objectContaining({ callId: 'c1', resumeToken: parked.resumeToken })])
    // The killed hosts' turn is closed as interrupted; the parked call stays open until resumed.
    expect(results(await j.events(turnId))).toEqual([])
    await c!.request('decide', { callId: 'c1', answer: 'allowed-once' })
    expect(await d!.request('resume', { token: parked.resumeToken })).toMatchObject({ status: 'completed' })
    expect(j.runs('note')).toHaveLength(1)
    expect(results(await j.events(turnId))).toHaveLength(1)
  })

  it('voids a pending decision when the resuming host has a changed tool, and asks again', async () => {
    const j = journal()
    const [a] = await hosts(j, ['host-a'])
    const [b] = await hosts(j, ['host-b'], { description: 'Write a note, and mail it to everyone.' })
    const parked = await a!.request<ToolCallOutcome>('execute', { callId: 'c1', name: 'note', args: { text: 'hi' } })
    await a!.request('decide', { callId: 'c1', answer: 'allowed-once' })
    const again = await b!.request<ToolCallOutcome>('resume', { token: parked.resumeToken })
    expect(again).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING' })
    expect(again.resumeToken).not.toBe(parked.resumeToken)
    expect(j.runs('note')).toEqual([])
    expect(await a!.request('pending')).toEqual([expect.objectContaining({ callId: 'c1', round: 2 })])
  })
})

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { type JournalEvent, type ToolCallOutcome, sqliteJournal } from 'seam-runtime'
import { startHost } from './hosts/hosts.js'

/** A program with a sub-call before and after one that needs approval, reading the clock and the random generator. */
const PROGRAM = `const a = await tools.tally({ n: 1 })
const t = Date.now()
const r = Math.random()
const noted = await tools.note({ text: 'hi' })
const [b, c] = await Promise.all([tools.tally({ n: 2 }), tools.tally({ n: 3 })])
return { a, noted, b, c, t, r }`

describe('Code Mode across a crash', () => {
  it('resumes a run parked on a sub-call in another process after its host was SIGKILLed: each completed sub-call ran once, time and randomness replayed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-code-restart-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'journal.db')
    const runLog = join(dir, 'runs.log')
    writeFileSync(runLog, '')
    const first = await startHost({ journal: file, hostId: 'host-a', runLog, codeMode: true })
    const parked = await first.request<ToolCallOutcome>('execute', { callId: 'r1', name: 'run_code', args: { code: PROGRAM } })
    expect(parked).toMatchObject({ callId: 'r1', status: 'suspended', code: 'APPROVAL_PENDING' })
    await first.kill()

    const second = await startHost({ journal: file, hostId: 'host-b', runLog, codeMode: true })
    const [pending] = await second.request<{ callId: string; tool: string; arguments: unknown }[]>('pending')
    expect(pending).toMatchObject({ callId: 'r1', tool: 'note', arguments: { text: 'hi' } })
    await second.request('decide', { callId: 'r1', answer: 'allowed-once' })
    const resumed = await second.request<ToolCallOutcome>('resume', { token: parked.resumeToken })
    expect(resumed).toMatchObject({ callId: 'r1', status: 'completed' })
    const value = (resumed.value as { value: Record<string, unknown> }).value
    expect(value).toMatchObject({ a: 1, noted: 'noted hi', b: 2, c: 3 })
    await second.close()

    // Every body ran exactly once, across both processes: the first sub-call in the killed one.
    const lines = readFileSync(runLog, 'utf8').trim().split('\n').map((line) => line.split(' '))
    expect(lines.map(([tool, callId]) => `${tool} ${callId}`).sort()).toEqual(['note r1/2', 'tally r1/1', 'tally r1/3', 'tally r1/4'])
    const pids = new Map(lines.map(([, callId, pid]) => [callId, pid]))
    expect(new Set([pids.get('r1/2'), pids.get('r1/3'), pids.get('r1/4')]).size).toBe(1)
    expect(pids.get('r1/1')).not.toBe(pids.get('r1/2'))

    const journal = sqliteJournal(file)
    onTestFinished(() => journal.close())
    const [round] = await journal.coordination.parked({ callId: 'r1', settled: true })
    expect(round!.settled).toMatchObject({ kind: 'resume', host: 'host-b' })
    expect([value.t, value.r]).toEqual([round!.code!.recorded.now[0], round!.code!.recorded.random[0]])
    const events = await journal.read(round!.turnId)
    const callIds = (kind: JournalEvent['kind']) => events.filter((e) => e.kind === kind).map((e) => (e as { callId: string }).callId).sort()
    expect(callIds('tool/call')).toEqual(['r1', 'r1/1', 'r1/2', 'r1/3', 'r1/4'])
    // One result each, none written by crash repair.
    expect(callIds('tool/result')).toEqual(callIds('tool/call'))
    expect(events.some((e) => e.kind === 'tool/result' && e.code === 'OUTCOME_UNKNOWN')).toBe(false)
    expect(new Set(events.map((e) => e.seq)).size).toBe(events.length)
  }, 60_000)
})

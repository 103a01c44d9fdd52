import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, definePlugin, sqliteJournal } from 'seam-runtime'

const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url))

interface MidCall {
  readonly turnId: string
  /** Kills the child with SIGKILL; resolves once it has exited (and been reaped). */
  kill(): Promise<void>
}

/** Runs the child until its call is in flight; it stays alive, mid-call, until killed. */
function startMidCall(journalPath: string): Promise<MidCall> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, journalPath], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise<NodeJS.Signals | null>((settle) => proc.on('exit', (_code, signal) => settle(signal)))
    const kill = async (): Promise<void> => {
      proc.kill('SIGKILL')
      const signal = await exited
      if (signal !== 'SIGKILL') throw new Error(`child exited without crashing (${signal})`)
    }
    onTestFinished(() => {
      proc.kill('SIGKILL')
    })
    proc.stdout.on('data', (chunk: Buffer) => {
      const match = /started (\S+)/.exec(chunk.toString())
      if (match) resolve({ turnId: match[1]!, kill })
    })
    void exited.then((signal) => reject(new Error(`child exited before its call started (${signal})`)))
  })
}

/** Runs the child until its call is in flight, then kills it with SIGKILL. Returns the turn id. */
async function crashMidCall(journalPath: string): Promise<string> {
  const running = await startMidCall(journalPath)
  await running.kill()
  return running.turnId
}

describe('crash repair', () => {
  it('closes a call left open by a killed process with exactly one OUTCOME_UNKNOWN result', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-crash-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const journalPath = path.join(dir, 'journal.db')
    const turnId = await crashMidCall(journalPath)

    const plugin = definePlugin({ name: 'root' })
    const first = await createRoot({ plugin, journal: sqliteJournal(journalPath) })
    expect(first.repaired).toEqual({ results: 1, turns: 1 })
    const events = await first.journal.read(turnId)
    expect(events.map((e) => e.kind)).toEqual(['turn/begin', 'tool/call', 'tool/result', 'turn/end'])
    expect(events[2]).toMatchObject({ callId: 'c1', status: 'failed', code: 'OUTCOME_UNKNOWN' })
    expect(events[3]).toMatchObject({ reason: 'interrupted' })
    await first.close()

    const second = await createRoot({ plugin, journal: sqliteJournal(journalPath) })
    onTestFinished(() => second.close())
    expect(second.repaired).toEqual({ results: 0, turns: 0 })
    expect((await second.journal.read(turnId)).filter((e) => e.kind === 'tool/result')).toHaveLength(1)
  })

  it('leaves the call of a process still running on the same journal, and closes it once that process is killed', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-crash-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const journalPath = path.join(dir, 'journal.db')
    const running = await startMidCall(journalPath)

    const plugin = definePlugin({ name: 'root' })
    const beside = await createRoot({ plugin, journal: sqliteJournal(journalPath) })
    expect(beside.repaired).toEqual({ results: 0, turns: 0 })
    expect((await beside.journal.read(running.turnId)).map((e) => e.kind)).toEqual(['turn/begin', 'tool/call'])
    await beside.close()

    await running.kill()
    const after = await createRoot({ plugin, journal: sqliteJournal(journalPath) })
    onTestFinished(() => after.close())
    expect(after.repaired).toEqual({ results: 1, turns: 1 })
    expect((await after.journal.read(running.turnId)).map((e) => e.kind)).toEqual(['turn/begin', 'tool/call', 'tool/result', 'turn/end'])
  })
})

import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, definePlugin, sqliteJournal } from 'seam-runtime'

const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url))

/** Runs the child until its call is in flight, then kills it with SIGKILL. Returns the turn id. */
function crashMidCall(journalPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, journalPath], { stdio: ['ignore', 'pipe', 'inherit'] })
    let turnId = ''
    proc.stdout.on('data', (chunk: Buffer) => {
      const match = /started (\S+)/.exec(chunk.toString())
      if (match) {
        turnId = match[1]!
        proc.kill('SIGKILL')
      }
    })
    proc.on('exit', (_code, signal) => (signal === 'SIGKILL' && turnId ? resolve(turnId) : reject(new Error(`child exited without crashing (${signal})`))))
  })
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
})

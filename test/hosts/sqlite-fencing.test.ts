import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { type JournalEvent, sqliteJournal, type ToolCallOutcome } from 'seam-runtime'
import { openSqlite, type SqliteDriver } from '../../src/runtime/journal/sqlite-driver.js'
import { sqliteDriversUnderTest } from '../../src/runtime/journal/sqlite-drivers.test-suite.js'
import { sleep } from '../kit.js'
import { startHost } from './hosts.js'

const LEASE_MS = 300

/** A journal file and a run log of the test's own, removed when it ends. */
function journal(driver: SqliteDriver) {
  const dir = mkdtempSync(join(tmpdir(), 'seam-fence-'))
  const path = join(dir, 'journal.db')
  const runLog = join(dir, 'runs.log')
  writeFileSync(runLog, '')
  const reader = sqliteJournal(path, { hostId: 'test-reader', driver })
  onTestFinished(async () => {
    await reader.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const runs = () => readFileSync(runLog, 'utf8').split('\n').filter((line) => line !== '')
  return { path, runLog, runs, events: (turnId: string) => reader.read(turnId) }
}

const resultOf = (events: readonly JournalEvent[], callId: string) =>
  events.find((event) => event.kind === 'tool/result' && event.callId === callId) as Extract<JournalEvent, { kind: 'tool/result' }> | undefined

describe.each(sqliteDriversUnderTest())('host processes sharing one SQLite file (%s), one of them hung past its lease (fencing)', { timeout: 60_000 }, (driver) => {
  it('refuses every write of the hung host once another took its lease over, and its caller gets OUTCOME_UNKNOWN as the journal says', async () => {
    const j = journal(driver)
    const [a, b] = await Promise.all(['host-a', 'host-b'].map((hostId) => startHost({ journal: j.path, hostId, runLog: j.runLog, leaseMs: LEASE_MS, sqliteDriver: driver })))
    const turnId = await a!.request<string>('turnId')
    const running = a!.request<ToolCallOutcome>('execute', { callId: 'c1', name: 'slow', args: { ms: 1_000 } })
    while (j.runs().length === 0) await sleep(5)
    // host-a hangs (a stopped process): its heartbeat stops, its body is still in flight.
    process.kill(a!.pid, 'SIGSTOP')
    onTestFinished(() => {
      // Continued, so it can be killed (it may be gone already).
      try {
        process.kill(a!.pid, 'SIGCONT')
      } catch {}
    })
    let events: JournalEvent[] = []
    for (const started = Date.now(); resultOf(events, 'c1') === undefined && Date.now() - started < 15_000; ) {
      await sleep(25)
      events = await j.events(turnId)
    }
    expect(resultOf(events, 'c1')).toMatchObject({ code: 'OUTCOME_UNKNOWN', host: 'host-b' })
    process.kill(a!.pid, 'SIGCONT')
    const outcome = await running
    expect(outcome).toMatchObject({ status: 'failed', code: 'OUTCOME_UNKNOWN' })
    // Not recorded, so not run: the hung host starts no body once fenced.
    expect(await a!.request<ToolCallOutcome>('execute', { callId: 'c2', name: 'echo', args: { n: 1 } })).toMatchObject({ code: 'JOURNAL_UNAVAILABLE' })
    await expect(a!.request('execute', { session: 's2', callId: 'c3', name: 'slow', args: { ms: 1 } })).rejects.toMatchObject({ code: 'HOST_FENCED' })
    const final = await j.events(turnId)
    expect(final.map((event) => [event.kind, event.host])).toEqual([
      ['turn/begin', 'host-a'],
      ['tool/call', 'host-a'],
      ['tool/result', 'host-b'],
      ['turn/end', 'host-b'],
    ])
    const db = openSqlite(j.path, { driver, readonly: true })
    onTestFinished(() => {
      db.close()
    })
    expect(db.prepare("SELECT count(*) AS n FROM seam_journal_events WHERE host = 'host-a'").get()).toMatchObject({ n: 2 })
    expect(db.prepare("SELECT fenced_at IS NOT NULL AS fenced FROM seam_journal_hosts WHERE host = 'host-a'").get()).toMatchObject({ fenced: 1 })
    expect(j.runs().map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual(['slow c1'])
    // The live host goes on.
    expect(await b!.request<ToolCallOutcome>('execute', { callId: 'b1', name: 'echo', args: { n: 2 } })).toMatchObject({ status: 'completed' })
  })
})

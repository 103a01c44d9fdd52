import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import { isProcessAlive } from './hosts.js'
import { describeCoordinationContract, type JournalBackend, type JournalStorage } from './coordination.test-suite.js'
import { UNKNOWN_OUTCOME_TEXT } from './repair.js'
import { describeTurnQueries } from './turn-query.test-suite.js'
import type { JournalEvent, JournalStore } from '../../seams/journal.js'

export type { JournalBackend, JournalStorage }

const AT = 1_750_000_000_000

export const begin = (turnId: string, seq: number): JournalEvent => ({
  kind: 'turn/begin',
  turnId,
  seq,
  at: AT,
  session: 's1',
  subjectId: 'u1',
  generation: 1,
  owner: 'root',
})
export const call = (turnId: string, seq: number, callId: string, args = '{}'): JournalEvent => ({
  kind: 'tool/call',
  turnId,
  seq,
  at: AT,
  callId,
  name: 'lookup',
  arguments: args,
  generation: 1,
})
export const result = (turnId: string, seq: number, callId: string, text = 'ok'): JournalEvent => ({
  kind: 'tool/result',
  turnId,
  seq,
  at: AT,
  callId,
  status: 'completed',
  content: [{ type: 'text', text }],
  durationMs: 3,
})
export const end = (turnId: string, seq: number): JournalEvent => ({ kind: 'turn/end', turnId, seq, at: AT, reason: 'ended' })

/** Events as written, without the `host` a shared store stamps on them. */
export function unhosted(events: readonly JournalEvent[]): JournalEvent[] {
  return events.map(({ host: _host, ...event }) => event as JournalEvent)
}

/** A turn as the runtime writes it: begin, `calls` call/result pairs, end, one append at a time. */
export async function runTurn(store: JournalStore, turnId: string, calls: number): Promise<JournalEvent[]> {
  const events = [begin(turnId, 1)]
  for (let index = 0; index < calls; index += 1) {
    events.push(call(turnId, 2 * index + 2, `c${index}`), result(turnId, 2 * index + 3, `c${index}`))
  }
  events.push(end(turnId, 2 * calls + 2))
  for (const event of events) await store.append(event)
  return events
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<SeamError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(SeamError.is(error), `expected a SeamError ${code}, got ${String(error)}`).toBe(true)
  expect((error as SeamError).code).toBe(code)
  return error as SeamError
}

/** The event, written now rather than at the fixed `AT` (before this process started). */
export const now = (event: JournalEvent): JournalEvent => ({ ...event, at: Date.now() })

/** A pid of this machine that no process has: a child's, once it has exited and been reaped. */
export function exitedPid(): number {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const { pid } = spawnSync(process.execPath, ['-e', ''])
    if (pid !== undefined && pid > 0 && !isProcessAlive(pid)) return pid
  }
  throw new Error('Found no pid of an exited process.')
}

let exitedHost: string | undefined
/** The host id of a process of this machine that has exited. */
export function deadHostId(): string {
  exitedHost ??= `${hostname()}:${exitedPid()}`
  return exitedHost
}

/** The host id of a live process of this machine other than this one: the parent that runs the tests. */
export function liveHostId(): string {
  expect(isProcessAlive(process.ppid)).toBe(true)
  return `${hostname()}:${process.ppid}`
}

/** A host id of another machine. */
export const OTHER_MACHINE = 'another-machine.invalid:4242'

type Appender = Pick<JournalStore, 'append'>

/** Writes turns with open calls and open turns; returns how many of each repair must close. */
async function writeInterruptedTurns(store: Appender): Promise<{ calls: number; turns: number }> {
  for (const event of [begin('t1', 1), call('t1', 2, 'c1'), result('t1', 3, 'c1'), call('t1', 4, 'c2'), call('t1', 5, 'c3')]) {
    await store.append(event)
  }
  for (const event of [begin('t2', 1), call('t2', 2, 'c1'), end('t2', 3)]) await store.append(event)
  for (const event of [begin('t3', 1), call('t3', 2, 'c1'), result('t3', 3, 'c1'), end('t3', 4)]) await store.append(event)
  return { calls: 3, turns: 1 }
}

/** The contract every `JournalStore` keeps, run by each store's test file against its own storage. */
export function describeJournalContract(name: string, backend: JournalBackend): void {
  async function storage(): Promise<JournalStorage> {
    const created = await backend.storage()
    onTestFinished(() => created.dispose())
    return created
  }

  /**
   * A store writing as `hostId`, and a store repairing as a process starting now would (on the same
   * storage, with the default host id). A memory journal cannot be shared, so there one store does
   * both and the writer sets `host` on each event, as a store of another process would have.
   */
  function writerAndRepairer(created: JournalStorage, hostId: string): { writer: Appender; repairer: JournalStore } {
    const repairer = created.open()
    if (backend.shared) return { writer: created.open({ hostId }), repairer }
    return { writer: { append: (event) => repairer.append({ ...event, host: hostId }) }, repairer }
  }

  describeCoordinationContract(name, backend, storage)

  describe(`${name} journal contract`, () => {
    describe('turn queries', () => describeTurnQueries(async () => (await storage()).open({ hostId: 'host-a' })))

    it('reads a turn back in seq order, apart from other turns, whatever order the appends came in', async () => {
      const store = (await storage()).open()
      const t1 = [begin('t1', 1), call('t1', 2, 'c1', '{"q":"ticket 42"}'), result('t1', 3, 'c1'), end('t1', 4)]
      const t2 = [begin('t2', 1), call('t2', 2, 'c1')]
      for (const [index, event] of [t1[0]!, t1[2]!, t1[1]!, t1[3]!].entries()) {
        await store.append(event)
        if (t2[index] !== undefined) await store.append(t2[index])
      }
      expect(unhosted(await store.read('t1'))).toEqual(t1)
      expect(unhosted(await store.read('t2'))).toEqual(t2)
      expect(await store.read('unknown')).toEqual([])
    })

    it("keeps a result's body timing (bodyAt, bodyMs) as written, for the console's waterfall", async () => {
      const store = (await storage()).open()
      const timed = { ...(result('t1', 3, 'c1') as Extract<JournalEvent, { kind: 'tool/result' }>), bodyAt: AT + 1, bodyMs: 1.25 }
      const events = [begin('t1', 1), call('t1', 2, 'c1'), timed, end('t1', 4)]
      for (const event of events) await store.append(event)
      expect(unhosted(await store.read('t1'))).toEqual(events)
    })

    it('refuses a second result for the same call with JOURNAL_DUPLICATE and keeps the first', async () => {
      const store = (await storage()).open()
      await store.append(call('t1', 1, 'c1'))
      await store.append(result('t1', 2, 'c1', 'first'))
      const error = await rejectsWith(store.append(result('t1', 3, 'c1', 'second')), 'JOURNAL_DUPLICATE')
      expect(error.message).toContain('c1')
      const results = (await store.read('t1')).filter((event) => event.kind === 'tool/result')
      expect(results).toHaveLength(1)
      expect(results[0]).toMatchObject({ seq: 2, content: [{ type: 'text', text: 'first' }] })
    })

    it('refuses a second turn/begin and a reused seq, but takes the same call id in another turn', async () => {
      const store = (await storage()).open()
      await store.append(begin('t1', 1))
      await rejectsWith(store.append(begin('t1', 2)), 'JOURNAL_DUPLICATE')
      await rejectsWith(store.append(call('t1', 1, 'c1')), 'JOURNAL_DUPLICATE')
      await store.append(call('t1', 2, 'c1'))
      await store.append(call('t2', 2, 'c1'))
      expect((await store.read('t1')).map((event) => event.seq)).toEqual([1, 2])
      expect(await store.read('t2')).toHaveLength(1)
    })

    it('refuses a call event without a call id before storing anything', async () => {
      const store = (await storage()).open()
      const bad = { ...call('t1', 1, 'c1'), callId: '' } as JournalEvent
      await rejectsWith(store.append(bad), 'INVALID_CALL')
      expect(await store.read('t1')).toEqual([])
    })

    it('refuses a turn event with a call id (it would dodge the one-per-turn rule), a fractional at and a seq past 2^31 - 1', async () => {
      const store = (await storage()).open()
      await store.append(begin('t1', 1))
      await rejectsWith(store.append({ ...end('t1', 2), callId: 'c1' } as JournalEvent), 'INVALID_CALL')
      await rejectsWith(store.append({ ...call('t1', 3, 'c1'), at: Date.now() + 0.5 }), 'INVALID_CALL')
      // Beyond the 32-bit column PostgreSQL keeps it in: refused alike by every store.
      await rejectsWith(store.append(call('t1', 2 ** 31, 'c1')), 'INVALID_CALL')
      await store.append(end('t1', 4))
      await rejectsWith(store.append({ ...end('t1', 5), callId: 'c2' } as JournalEvent), 'INVALID_CALL')
      expect((await store.read('t1')).map((event) => event.kind)).toEqual(['turn/begin', 'turn/end'])
    })

    it('tails the last events across turns, oldest first', async () => {
      const store = (await storage()).open()
      await store.append(begin('t1', 1))
      await store.append(begin('t2', 1))
      await store.append(call('t1', 2, 'c1'))
      await store.append(end('t2', 2))
      expect(unhosted(await store.tail(3))).toEqual([begin('t2', 1), call('t1', 2, 'c1'), end('t2', 2)])
      expect(await store.tail(100)).toHaveLength(4)
      expect(await store.tail(0)).toEqual([])
    })

    it('tails in append order, also when events came after later seqs of their turn', async () => {
      const store = (await storage()).open()
      // t1's seqs arrive 1, 5, 4, 3, 2: its newest event is its second by seq.
      const appended = [begin('t2', 1), begin('t1', 1), call('t1', 5, 'c1'), call('t1', 4, 'c2'), call('t1', 3, 'c3'), call('t1', 2, 'c4')]
      for (const event of appended) await store.append(event)
      expect((await store.read('t1')).map((event) => event.seq)).toEqual([1, 2, 3, 4, 5])
      for (let limit = 1; limit <= 7; limit += 1) expect(unhosted(await store.tail(limit)), `tail(${limit})`).toEqual(appended.slice(-limit))
    })

    it('repairs open calls with OUTCOME_UNKNOWN and open turns as interrupted, numbered after their last event', async () => {
      const { writer, repairer: store } = writerAndRepairer(await storage(), deadHostId())
      const open = await writeInterruptedTurns(writer)
      expect(await store.repair()).toEqual({ results: open.calls, turns: open.turns })
      const t1 = await store.read('t1')
      expect(t1.slice(5).map((event) => [event.seq, event.kind, 'callId' in event ? event.callId : undefined])).toEqual([
        [6, 'tool/result', 'c2'],
        [7, 'tool/result', 'c3'],
        [8, 'turn/end', undefined],
      ])
      expect(t1[5]).toMatchObject({
        status: 'failed',
        code: 'OUTCOME_UNKNOWN',
        content: [{ type: 'text', text: UNKNOWN_OUTCOME_TEXT }],
        durationMs: 0,
      })
      expect(t1[7]).toMatchObject({ reason: 'interrupted' })
      expect((await store.read('t2')).at(-1)).toMatchObject({ seq: 4, kind: 'tool/result', callId: 'c1' })
      expect(await store.read('t3')).toHaveLength(4)
    })

    it('writes nothing when repair runs a second time', async () => {
      const { writer, repairer: store } = writerAndRepairer(await storage(), deadHostId())
      await writeInterruptedTurns(writer)
      await store.repair()
      const before = await store.tail(100)
      expect(await store.repair()).toEqual({ results: 0, turns: 0 })
      expect(await store.tail(100)).toEqual(before)
    })

    it('leaves the open turn and call of a live process of this machine, which goes on appending to its turn', async () => {
      const { writer, repairer } = writerAndRepairer(await storage(), liveHostId())
      await writer.append(begin('t1', 1))
      await writer.append(call('t1', 2, 'c1'))
      expect(await repairer.repair()).toEqual({ results: 0, turns: 0 })
      expect(await repairer.repair({ hosts: 'all' })).toEqual({ results: 0, turns: 0 })
      await writer.append(result('t1', 3, 'c1'))
      await writer.append(end('t1', 4))
      const events = await repairer.read('t1')
      expect(events.map((event) => [event.seq, event.kind])).toEqual([
        [1, 'turn/begin'],
        [2, 'tool/call'],
        [3, 'tool/result'],
        [4, 'turn/end'],
      ])
      expect(events[2]).toMatchObject({ status: 'completed' })
      expect(events[3]).toMatchObject({ reason: 'ended' })
    })

    it('repairs the open turn and call of a process of this machine that has exited', async () => {
      const { writer, repairer } = writerAndRepairer(await storage(), deadHostId())
      await writer.append(now(begin('t1', 1)))
      await writer.append(now(call('t1', 2, 'c1')))
      expect(await repairer.repair()).toEqual({ results: 1, turns: 1 })
      expect((await repairer.read('t1')).slice(2)).toMatchObject([
        { seq: 3, kind: 'tool/result', callId: 'c1', code: 'OUTCOME_UNKNOWN' },
        { seq: 4, kind: 'turn/end', reason: 'interrupted' },
      ])
    })

    it("leaves another machine's open turns and calls unless told to repair all hosts", async () => {
      const created = await storage()
      const { writer, repairer } = writerAndRepairer(created, OTHER_MACHINE)
      await writer.append(begin('t1', 1))
      await writer.append(call('t1', 2, 'c1'))
      await writer.append(call('t2', 1, 'c1'))
      expect(await repairer.repair()).toEqual({ results: 0, turns: 0 })
      expect(await repairer.read('t1')).toHaveLength(2)
      expect(await repairer.repair({ hosts: 'all' })).toEqual({ results: 2, turns: 1 })
      expect((await repairer.read('t1')).map((event) => event.kind)).toEqual(['turn/begin', 'tool/call', 'tool/result', 'turn/end'])
      expect(await repairer.repair({ hosts: 'all' })).toEqual({ results: 0, turns: 0 })
    })

    it('keeps every append of 16 turns appending at once', async () => {
      const store = (await storage()).open()
      const turns = await Promise.all(Array.from({ length: 16 }, (_, index) => runTurn(store, `t${index}`, 5)))
      for (const [index, events] of turns.entries()) expect(unhosted(await store.read(`t${index}`))).toEqual(events)
      expect(await store.tail(1000)).toHaveLength(16 * 12)
    })

    it('stores arguments with secrets redacted and oversized text truncated', async () => {
      const store = (await storage()).open({ maxPayloadBytes: 1024 })
      const args = JSON.stringify({ user: 'ann', password: 'hunter2', nested: [{ apiKey: 'k-123', keep: 1 }] })
      const big = 'é'.repeat(3000)
      await store.append(call('t1', 1, 'c1', args))
      await store.append(result('t1', 2, 'c1', big))
      const [storedCall, storedResult] = await store.read('t1')
      expect(JSON.parse((storedCall as { arguments: string }).arguments)).toEqual({
        user: 'ann',
        password: '[redacted]',
        nested: [{ apiKey: '[redacted]', keep: 1 }],
      })
      const text = (storedResult as { content: { text: string }[] }).content[0]!.text
      const sha = createHash('sha256').update(big).digest('hex')
      expect(text.endsWith(`…[truncated: 6000 bytes, sha256:${sha}]`)).toBe(true)
      expect(text.startsWith('éé')).toBe(true)
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024)
    })

    it('rejects appends and repair after close with CLOSED, and closes twice without error', async () => {
      const store = (await storage()).open()
      await store.append(begin('t1', 1))
      await store.close()
      await store.close()
      const error = await rejectsWith(store.append(call('t1', 2, 'c1')), 'CLOSED')
      expect(error.message).toContain(store.location)
      await rejectsWith(store.repair(), 'CLOSED')
      // A durable store's connection is gone; the memory store keeps answering reads.
      if (backend.shared) {
        await rejectsWith(store.read('t1'), 'CLOSED')
        await rejectsWith(store.tail(1), 'CLOSED')
      }
    })

    it('settles appends made just before close', async () => {
      const created = await storage()
      const store = created.open()
      const pending = [store.append(begin('t1', 1)), store.append(call('t1', 2, 'c1'))]
      await store.close()
      await Promise.all(pending)
      if (backend.shared) expect(await created.open().read('t1')).toHaveLength(2)
    })

    // Only durable stores share storage between store instances.
    if (!backend.shared) return
    describe('on storage shared by several stores', () => {
      it('has every append committed once it resolves, and keeps it after the store is reopened', async () => {
        const created = await storage()
        const first = created.open()
        const turns = await Promise.all(Array.from({ length: 16 }, (_, index) => runTurn(first, `t${index}`, 10)))
        // Another connection sees them before the first store closes: resolved means committed.
        const other = created.open()
        for (const [index, events] of turns.entries()) expect(unhosted(await other.read(`t${index}`))).toEqual(events)
        await Promise.all([first.close(), other.close()])
        const reopened = created.open()
        for (const [index, events] of turns.entries()) expect(unhosted(await reopened.read(`t${index}`))).toEqual(events)
      })

      it('refuses a result that another store already wrote', async () => {
        const created = await storage()
        const a = created.open({ hostId: 'host-a' })
        const b = created.open({ hostId: 'host-b' })
        await a.append(call('t1', 1, 'c1'))
        await a.append(result('t1', 2, 'c1'))
        await rejectsWith(b.append(result('t1', 3, 'c1')), 'JOURNAL_DUPLICATE')
      })

      it('writes one result per call when two hosts repair at once', async () => {
        const created = await storage()
        const a = created.open({ hostId: 'host-a' })
        const b = created.open({ hostId: 'host-b' })
        const open = await writeInterruptedTurns(created.open({ hostId: deadHostId() }))
        const reports = await Promise.all([a.repair(), b.repair()])
        expect(reports[0].results + reports[1].results).toBe(open.calls)
        expect(reports[0].turns + reports[1].turns).toBe(open.turns)
        for (const turnId of ['t1', 't2', 't3']) {
          const events = await b.read(turnId)
          const calls = events.filter((event) => event.kind === 'tool/call').map((event) => event.callId)
          const results = events.filter((event) => event.kind === 'tool/result').map((event) => event.callId)
          expect(results.sort()).toEqual(calls.sort())
          expect(events.filter((event) => event.kind === 'turn/end')).toHaveLength(1)
        }
      })

      it('leaves what another store of this process writes under the same host id, which goes on appending', async () => {
        const created = await storage()
        const writer = created.open()
        await writer.append(now(begin('t1', 1)))
        await writer.append(now(call('t1', 2, 'c1')))
        const starting = created.open()
        expect(await starting.repair()).toEqual({ results: 0, turns: 0 })
        await writer.append(now(result('t1', 3, 'c1')))
        await writer.append(now(end('t1', 4)))
        expect((await starting.read('t1')).map((event) => [event.seq, event.kind, event.host])).toEqual([
          [1, 'turn/begin', `${hostname()}:${process.pid}`],
          [2, 'tool/call', `${hostname()}:${process.pid}`],
          [3, 'tool/result', `${hostname()}:${process.pid}`],
          [4, 'turn/end', `${hostname()}:${process.pid}`],
        ])
      })

      it('repairs what an earlier process with the same host id left before this process started', async () => {
        const created = await storage()
        // A fixed host id, as a restarted container that is pid 1 again has.
        const earlier = created.open({ hostId: 'web-1' })
        await earlier.append(begin('t1', 1))
        await earlier.append(call('t1', 2, 'c1'))
        await earlier.append(now(begin('t2', 1)))
        const restarted = created.open({ hostId: 'web-1' })
        expect(await restarted.repair()).toEqual({ results: 1, turns: 1 })
        expect((await restarted.read('t1')).at(-1)).toMatchObject({ kind: 'turn/end', reason: 'interrupted', host: 'web-1' })
        expect(await restarted.read('t2')).toHaveLength(1)
      })
    })
  })
}

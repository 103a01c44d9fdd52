import { describe, expect, it } from 'vitest'
import type { ParkedCall } from '../../seams/coordination.js'
import type { PrivacyOptions } from '../base/privacy.js'
import type { JournalEvent, JournalStore } from '../../seams/journal.js'

const AT = 1_750_000_000_000

/** A parked first round of `callId`: asked at seq 3, with seqs 4 and 5 kept for its settlement. */
export function parkedCall(turnId: string, callId: string, overrides: Partial<ParkedCall> = {}): ParkedCall {
  return {
    turnId,
    callId,
    round: 1,
    token: `tok-${turnId}-${callId}-${overrides.round ?? 1}`,
    name: 'write_note',
    arguments: '{"text":"hello","password":"hunter2"}',
    summary: 'write_note text="hello" password="[redacted]"',
    reason: 'writes a file',
    answers: ['allowed-once', 'allowed-session', 'rejected'],
    session: 's1',
    subjectId: 'u1',
    roles: ['staff'],
    owner: 'root',
    generation: 1,
    source: 'feature:root',
    fingerprint: 'fp-1',
    decidedSeq: 4,
    resultSeq: 5,
    askedAt: AT,
    host: 'host-a',
    ...overrides,
  }
}

const event = {
  begin: (turnId: string): JournalEvent => ({ kind: 'turn/begin', turnId, seq: 1, at: AT, session: 's1', subjectId: 'u1', generation: 1, owner: 'root' }),
  call: (turnId: string, seq: number, callId: string): JournalEvent => ({ kind: 'tool/call', turnId, seq, at: AT, callId, name: 'write_note', arguments: '{}', generation: 1 }),
  asked: (turnId: string, seq: number, callId: string): JournalEvent => ({ kind: 'approval/asked', turnId, seq, at: AT, callId, name: 'write_note', reason: 'r', summary: 's' }),
}

/** One test's storage: every `open` opens another store on it (a restart, or a second host). */
export interface JournalStorage {
  open(options?: PrivacyOptions & { hostId?: string }): JournalStore
  /** Closes every store it opened and removes the storage. */
  dispose(): Promise<void>
}

export interface JournalBackend {
  /** Fresh storage for one test. */
  storage(): Promise<JournalStorage>
  /** Whether a second `open` sees what the first wrote (durable stores); memory stores do not. */
  readonly shared: boolean
}

/**
 * The coordination claims every store keeps (see `JournalCoordination`), run inside each store's
 * journal contract. On shared storage, "once" is checked between two stores racing, as two
 * processes would.
 */
export function describeCoordinationContract(name: string, backend: JournalBackend, storage: () => Promise<JournalStorage>): void {
  /** Two stores on one storage (two hosts), or one memory store twice. */
  async function twoHosts(): Promise<[JournalStore, JournalStore]> {
    const created = await storage()
    const a = created.open({ hostId: 'host-a' })
    return [a, backend.shared ? created.open({ hostId: 'host-b' }) : a]
  }

  /** A store, and an appender writing as `host` on its storage (a memory store keeps the event's own host). */
  async function repairerAndWriter(host: string): Promise<[JournalStore, (event: JournalEvent) => Promise<void>]> {
    const created = await storage()
    const repairer = created.open()
    if (!backend.shared) return [repairer, (e) => repairer.append({ ...e, host })]
    const writer = created.open({ hostId: host })
    return [repairer, (e) => writer.append(e)]
  }

  describe(`${name} journal coordination`, () => {
    it('parks a round, lists it by session and subject, finds it by token, and refuses the same round twice', async () => {
      const [a, b] = await twoHosts()
      const call = parkedCall('t1', 'c1')
      await a.coordination.park(call)
      await a.coordination.park(parkedCall('t2', 'c1', { session: 's2', subjectId: 'u2', askedAt: AT + 1 }))
      expect(await b.coordination.parked({ session: 's1' })).toEqual([call])
      expect((await b.coordination.parked({ subjectId: 'u2' })).map((p) => p.turnId)).toEqual(['t2'])
      expect((await b.coordination.parked()).map((p) => p.turnId)).toEqual(['t1', 't2'])
      expect(await b.coordination.parked({ token: call.token })).toEqual([call])
      await expect(b.coordination.park({ ...call, token: 'another' })).rejects.toMatchObject({ code: 'JOURNAL_DUPLICATE' })
    })

    it('keeps the answers a round offered, in the order once, session, reject, through park, list, decide and settle', async () => {
      const [a, b] = await twoHosts()
      const always = parkedCall('t1', 'c1', { answers: ['rejected', 'allowed-once'] })
      const once = parkedCall('t2', 'c1', { answers: ['allowed-session', 'rejected'], askedAt: AT + 1 })
      await a.coordination.park(always)
      await a.coordination.park(once)
      expect((await b.coordination.parked()).map((p) => p.answers)).toEqual([
        ['allowed-once', 'rejected'],
        ['allowed-session', 'rejected'],
      ])
      const decided = await b.coordination.decide(always.token, { answer: 'allowed-once', by: 'ann', at: AT, host: 'host-b' })
      expect(decided!.call.answers).toEqual(['allowed-once', 'rejected'])
      const settled = await a.coordination.settle(once.token, { kind: 'reject', host: 'host-a', at: AT })
      expect(settled!.call.answers).toEqual(['allowed-session', 'rejected'])
    })

    it('reads a round stored without answers (parked by a build that did not record them) as offering all three', async () => {
      const [a, b] = await twoHosts()
      // What a build before `answers` wrote: the same call document, without the field.
      const { answers: _answers, ...older } = parkedCall('t1', 'c1')
      await a.coordination.park(older as ParkedCall)
      const [read] = await b.coordination.parked()
      expect(read!.answers).toEqual(['allowed-once', 'allowed-session', 'rejected'])
      expect(read).toEqual({ ...older, answers: ['allowed-once', 'allowed-session', 'rejected'] })
    })

    it('keeps the first decision: a second decider loses and sees who decided', async () => {
      const [a, b] = await twoHosts()
      const { token } = parkedCall('t1', 'c1')
      await a.coordination.park(parkedCall('t1', 'c1'))
      const decisions = await Promise.all([
        a.coordination.decide(token, { answer: 'allowed-once', by: 'ann', at: AT, host: 'host-a' }),
        b.coordination.decide(token, { answer: 'rejected', by: 'bob', at: AT, host: 'host-b' }),
      ])
      expect(decisions.filter((d) => d?.won)).toHaveLength(1)
      const winner = decisions.find((d) => d?.won)!.call.decision!
      for (const decided of decisions) expect(decided!.call.decision).toEqual(winner)
      expect(await a.coordination.decide('no-such-token', { answer: 'rejected', by: 'x', at: AT, host: 'h' })).toBeUndefined()
    })

    it('settles a round once, however many hosts race for it, and then takes no decision', async () => {
      const [a, b] = await twoHosts()
      const { token } = parkedCall('t1', 'c1')
      await a.coordination.park(parkedCall('t1', 'c1'))
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, index) => (index % 2 === 0 ? a : b).coordination.settle(token, { kind: 'resume', host: `h${index}`, at: AT })),
      )
      expect(claims.filter((claim) => claim?.won)).toHaveLength(1)
      expect(await a.coordination.parked()).toEqual([])
      expect((await a.coordination.parked({ settled: true }))[0]!.settled).toEqual(claims.find((claim) => claim?.won)!.call.settled)
      const late = await b.coordination.decide(token, { answer: 'allowed-once', by: 'ann', at: AT, host: 'host-b' })
      expect(late).toMatchObject({ won: false })
      expect(late!.call.decision).toBeUndefined()
    })

    it('refuses a decision past the deadline and an expiry of a decided round, and expires only undecided rounds past it', async () => {
      const [a, b] = await twoHosts()
      const { token } = parkedCall('t1', 'c1')
      await a.coordination.park(parkedCall('t1', 'c1'))
      await a.coordination.park(parkedCall('t1', 'c2', { askedAt: AT + 10 }))
      const decision = { answer: 'allowed-once', by: 'ann', at: AT, host: 'host-b' } as const
      expect(await b.coordination.decide(token, decision, AT + 1)).toMatchObject({ won: false, call: { callId: 'c1' } })
      expect(await a.coordination.expire(token, { host: 'host-a', at: AT }, AT)).toMatchObject({ won: false })
      expect(await b.coordination.decide(token, decision, AT)).toMatchObject({ won: true, call: { decision } })
      expect(await a.coordination.expire(token, { host: 'host-a', at: AT + 99 }, AT + 99)).toMatchObject({ won: false, call: { decision } })
      expect((await a.coordination.parked()).map((p) => p.callId)).toEqual(['c1', 'c2'])
      const expired = await b.coordination.expire(parkedCall('t1', 'c2').token, { host: 'host-b', at: AT + 99 }, AT + 11)
      expect(expired).toMatchObject({ won: true, call: { settled: { kind: 'expire', host: 'host-b', at: AT + 99 } } })
      expect(await a.coordination.decide(parkedCall('t1', 'c2').token, decision)).toMatchObject({ won: false })
      expect(await a.coordination.expire('no-such-token', { host: 'h', at: AT }, AT)).toBeUndefined()
    })

    it('lets exactly one of a decision and an expiry racing at the deadline land, over 40 races on real timers', async () => {
      const [a, b] = await twoHosts()
      const ttl = 12
      for (let race = 0; race < 40; race += 1) {
        const call = parkedCall('t-race', `c${race}`, { askedAt: Date.now() })
        await a.coordination.park(call)
        const at = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
        const [decided, expired] = await Promise.all([
          at(ttl - 3 + (race % 6)).then(() => a.coordination.decide(call.token, { answer: 'allowed-once', by: 'ann', at: Date.now(), host: 'host-a' }, Date.now() - ttl)),
          at(ttl + (race % 3)).then(() => b.coordination.expire(call.token, { host: 'host-b', at: Date.now() }, Date.now() - ttl)),
        ])
        expect(decided!.won && expired!.won, call.callId).toBe(false)
        // Whatever the race left undecided expires later; a decision that landed stays.
        const later = await b.coordination.expire(call.token, { host: 'host-b', at: Date.now() }, Number.MAX_SAFE_INTEGER)
        const [round] = await a.coordination.parked({ token: call.token, settled: true })
        if (decided!.won) expect(round, call.callId).toMatchObject({ decision: { answer: 'allowed-once' } })
        if (decided!.won) expect(round!.settled, call.callId).toBeUndefined()
        else expect(round, call.callId).toMatchObject({ settled: { kind: 'expire' } })
        expect(round!.decision === undefined || !later!.won).toBe(true)
      }
    })

    it('gives an idempotency key to one holder, keeps its completed result, and frees it only when released unfinished', async () => {
      const [a, b] = await twoHosts()
      const first = { turnId: 't1', callId: 'c1', host: 'host-a' }
      const second = { turnId: 't2', callId: 'c1', host: 'host-b' }
      const claims = await Promise.all([a.coordination.claimKey('k1', first), b.coordination.claimKey('k1', second)])
      expect(claims[0]).toMatchObject({ turnId: claims[1].turnId, callId: 'c1', host: claims[1].host })
      const holder = claims[0].host === 'host-a' ? first : second
      const other = holder === first ? second : first
      await a.coordination.releaseKey('k1', other)
      expect(await b.coordination.readKey('k1')).toMatchObject(holder)
      await a.coordination.releaseKey('k1', holder)
      expect(await b.coordination.readKey('k1')).toBeUndefined()
      await b.coordination.claimKey('k1', other)
      await b.coordination.completeKey('k1', other, { content: [{ type: 'text', text: 'done' }], value: { id: 7 } })
      await a.coordination.releaseKey('k1', other)
      expect(await a.coordination.claimKey('k1', holder)).toMatchObject({ ...other, result: { content: [{ type: 'text', text: 'done' }], value: { id: 7 } } })
    })

    it('stores a task every host reads, changes it until it settles, and never after', async () => {
      const [a, b] = await twoHosts()
      const task = { taskId: 't1', session: 's1', subjectId: 'u1', status: 'working' as const, createdAt: AT, updatedAt: AT, ttlMs: 60_000, state: {} }
      await a.coordination.createTask(task)
      await expect(b.coordination.createTask(task)).rejects.toMatchObject({ code: 'JOURNAL_DUPLICATE' })
      expect(await b.coordination.readTask('t1')).toEqual(task)
      expect(await b.coordination.readTask('t2')).toBeUndefined()
      const asking = { status: 'input_required' as const, state: { inputRequests: { approval: { method: 'elicitation/create' } } }, at: AT + 1 }
      expect(await b.coordination.updateTask('t1', asking, 'working')).toBe(true)
      // The expected status guards a change: only one of two hosts moving it from input_required wins.
      expect(await a.coordination.updateTask('t1', { status: 'working', state: {}, at: AT + 2 }, 'input_required')).toBe(true)
      expect(await b.coordination.updateTask('t1', { status: 'working', state: { again: true }, at: AT + 2 }, 'input_required')).toBe(false)
      expect(await b.coordination.updateTask('t1', { status: 'cancelled', state: {}, at: AT + 3 })).toBe(true)
      expect(await a.coordination.updateTask('t1', { status: 'completed', state: { result: { content: [] } }, at: AT + 4 })).toBe(false)
      expect(await a.coordination.readTask('t1')).toEqual({ ...task, status: 'cancelled', state: {}, updatedAt: AT + 3 })
    })

    it('changes a task only from the updatedAt it was read at, when the change expects one', async () => {
      const [a, b] = await twoHosts()
      await a.coordination.createTask({ taskId: 't1', session: 's1', subjectId: 'u1', status: 'input_required', createdAt: AT, updatedAt: AT, ttlMs: 60_000, state: {} })
      // Two hosts read the task at AT and each adds its own answer: the first write lands, the second is refused.
      expect(await a.coordination.updateTask('t1', { status: 'input_required', state: { responses: { q1: 1 } }, at: AT + 1 }, { status: 'input_required', updatedAt: AT })).toBe(true)
      expect(await b.coordination.updateTask('t1', { status: 'input_required', state: { responses: { q2: 2 } }, at: AT + 1 }, { status: 'input_required', updatedAt: AT })).toBe(false)
      // Read again, it lands on top of the first.
      const read = (await b.coordination.readTask('t1'))!
      expect(read.updatedAt).toBe(AT + 1)
      const both = { responses: { ...(read.state.responses as object), q2: 2 } }
      expect(await b.coordination.updateTask('t1', { status: 'input_required', state: both, at: AT + 2 }, { updatedAt: read.updatedAt })).toBe(true)
      expect(await a.coordination.readTask('t1')).toMatchObject({ updatedAt: AT + 2, state: { responses: { q1: 1, q2: 2 } } })
      // The status and the updatedAt must both hold.
      expect(await a.coordination.updateTask('t1', { status: 'working', state: {}, at: AT + 3 }, { status: 'working', updatedAt: AT + 2 })).toBe(false)
      expect(await a.coordination.updateTask('t1', { status: 'working', state: {}, at: AT + 3 }, { status: 'input_required', updatedAt: AT + 2 })).toBe(true)
    })

    it('holds a session grant for one session, subject, source and fingerprint only', async () => {
      const [a, b] = await twoHosts()
      const grant = { session: 's1', subjectId: 'u1', source: 'feature:root', fingerprint: 'fp-1' }
      expect(await b.coordination.hasGrant(grant)).toBe(false)
      await a.coordination.grant(grant)
      await a.coordination.grant(grant)
      expect(await b.coordination.hasGrant(grant)).toBe(true)
      for (const changed of [{ fingerprint: 'fp-2' }, { session: 's2' }, { subjectId: 'u2' }, { source: 'seam:other' }]) {
        expect(await b.coordination.hasGrant({ ...grant, ...changed })).toBe(false)
      }
    })

    it('lists the standing grants, and revokes those of a session (or one of them) for every host', async () => {
      const [a, b] = await twoHosts()
      const g = (session: string, fingerprint: string) => ({ session, subjectId: 'u1', source: 'feature:root', fingerprint })
      await a.coordination.grant(g('s1', 'fp-1'))
      await a.coordination.grant(g('s1', 'fp-2'))
      await a.coordination.grant(g('s2', 'fp-1'))
      const all = await b.coordination.grants()
      expect(all.map((x) => [x.session, x.fingerprint])).toEqual([
        ['s1', 'fp-1'],
        ['s1', 'fp-2'],
        ['s2', 'fp-1'],
      ])
      expect(typeof all[0]!.at).toBe('number')
      expect(await b.coordination.grants({ session: 's2' })).toEqual([expect.objectContaining(g('s2', 'fp-1'))])
      expect(await b.coordination.revokeGrants({ session: 's1', fingerprint: 'fp-2' })).toBe(1)
      expect(await a.coordination.hasGrant(g('s1', 'fp-2'))).toBe(false)
      expect(await a.coordination.hasGrant(g('s1', 'fp-1'))).toBe(true)
      expect(await b.coordination.revokeGrants({ session: 's1' })).toBe(1)
      expect(await b.coordination.revokeGrants({ session: 's1' })).toBe(0)
      expect((await a.coordination.grants()).map((x) => x.session)).toEqual(['s2'])
    })

    it('leaves a parked call open in crash repair, and keeps its reserved seqs free of the repaired turn end', async () => {
      const dead = 'another-machine.invalid:1'
      const [a, append] = await repairerAndWriter(dead)
      for (const e of [event.begin('t1'), event.call('t1', 2, 'c1'), event.asked('t1', 3, 'c1')]) await append(e)
      await a.coordination.park(parkedCall('t1', 'c1', { host: dead }))
      expect(await a.repair({ hosts: 'all' })).toEqual({ results: 0, turns: 1 })
      expect((await a.read('t1')).at(-1)).toMatchObject({ kind: 'turn/end', seq: 6, reason: 'interrupted' })
      expect(await a.coordination.parked()).toHaveLength(1)
    })

    it('fences a host past its lease when it repairs: that host beats no more, and a store holding that lease has every write refused', async () => {
      const created = await storage()
      const repairer = created.open({ hostId: 'host-a' })
      await repairer.coordination.heartbeat('host-a', 60_000)
      const fenced = backend.shared ? created.open({ hostId: 'host-b' }) : repairer
      await fenced.coordination.heartbeat('host-b', 1)
      if (backend.shared) {
        for (const e of [event.begin('t1'), event.call('t1', 2, 'c1'), event.call('t1', 3, 'c2'), event.asked('t1', 4, 'c2')]) await fenced.append(e)
        await fenced.coordination.park(parkedCall('t1', 'c2', { host: 'host-b', decidedSeq: 5, resultSeq: 6 }))
        await fenced.coordination.grant({ session: 's1', subjectId: 'u1', source: 'x', fingerprint: 'f' })
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(await repairer.repair()).toEqual(backend.shared ? { results: 1, turns: 1 } : { results: 0, turns: 0 })
      await expect(fenced.coordination.heartbeat('host-b', 60_000)).rejects.toMatchObject({ code: 'HOST_FENCED' })
      if (backend.shared) {
        const result: JournalEvent = { kind: 'tool/result', turnId: 't1', seq: 5, at: AT, callId: 'c1', status: 'completed', content: [], durationMs: 1 }
        await expect(fenced.append(result)).rejects.toMatchObject({ code: 'HOST_FENCED' })
        await expect(fenced.coordination.claimKey('k1', { turnId: 't1', callId: 'c1', host: 'host-b' })).rejects.toMatchObject({ code: 'HOST_FENCED' })
        await expect(fenced.repair()).rejects.toMatchObject({ code: 'HOST_FENCED' })
        // Every other write of the fenced store is refused too, and changes nothing.
        const token = parkedCall('t1', 'c2').token
        const holder = { turnId: 't1', callId: 'c1', host: 'host-b' }
        const grant = { session: 's1', subjectId: 'u1', source: 'x', fingerprint: 'f' }
        const writes: [string, () => Promise<unknown>][] = [
          ['park', () => fenced.coordination.park(parkedCall('t1', 'c2', { round: 2, host: 'host-b' }))],
          ['decide', () => fenced.coordination.decide(token, { answer: 'allowed-once', by: 'u1', at: AT, host: 'host-b' })],
          ['expire', () => fenced.coordination.expire(token, { host: 'host-b', at: AT }, Number.MAX_SAFE_INTEGER)],
          ['settle', () => fenced.coordination.settle(token, { kind: 'resume', host: 'host-b', at: AT })],
          ['completeKey', () => fenced.coordination.completeKey('k1', holder, { content: [] })],
          ['releaseKey', () => fenced.coordination.releaseKey('k1', holder)],
          ['grant', () => fenced.coordination.grant({ ...grant, fingerprint: 'g' })],
          ['revokeGrants', () => fenced.coordination.revokeGrants({ session: 's1' })],
          ['retire', () => fenced.coordination.retire('host-b')],
        ]
        for (const [name, write] of writes) await expect(write(), name).rejects.toMatchObject({ code: 'HOST_FENCED' })
        expect(await repairer.coordination.parked({ turnId: 't1' })).toMatchObject([{ callId: 'c2', round: 1 }])
        expect((await repairer.coordination.parked({ turnId: 't1' }))[0]).not.toHaveProperty('decision')
        expect(await repairer.coordination.grants()).toMatchObject([grant])
        expect((await repairer.read('t1')).map((e) => [e.kind, e.host])).toEqual([
          ['turn/begin', 'host-b'],
          ['tool/call', 'host-b'],
          ['tool/call', 'host-b'],
          ['approval/asked', 'host-b'],
          ['tool/result', 'host-a'],
          ['turn/end', 'host-a'],
        ])
      }
      // The repairer's own lease holds.
      await repairer.coordination.heartbeat('host-a', 60_000)
      await repairer.append(event.begin('t2'))
    })

    it('repairs a resumed call once the host that claimed it is gone, and keeps the keys of what it closes held', async () => {
      const writer = 'another-machine.invalid:2'
      const [a, append] = await repairerAndWriter(writer)
      for (const e of [event.begin('t1'), event.call('t1', 2, 'c1'), event.asked('t1', 3, 'c1'), event.call('t1', 6, 'c2')]) await append(e)
      await a.coordination.park(parkedCall('t1', 'c1', { host: writer }))
      await a.coordination.claimKey('k2', { turnId: 't1', callId: 'c2', host: writer })
      await a.coordination.heartbeat(writer, 60_000)
      await a.coordination.settle(parkedCall('t1', 'c1').token, { kind: 'resume', host: 'resumer.invalid:3', at: Date.now() })
      // The writer's lease holds; the resumer is on another machine and has no heartbeat.
      expect(await a.repair()).toEqual({ results: 0, turns: 0 })
      await a.coordination.heartbeat('resumer.invalid:3', 1)
      await a.coordination.heartbeat(writer, 1)
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(await a.repair()).toEqual({ results: 2, turns: 1 })
      const results = (await a.read('t1')).filter((e) => e.kind === 'tool/result')
      // The resumed call's result takes the seq its turn kept for it (its turn may be live and
      // numbering on); the other call's takes the next free one.
      expect(results.map((e) => [e.callId, e.code, e.seq])).toEqual([
        ['c1', 'OUTCOME_UNKNOWN', 5],
        ['c2', 'OUTCOME_UNKNOWN', 7],
      ])
      // The closed call may have run: its key stays held by it, for the next call with the key to see.
      expect(await a.coordination.readKey('k2')).toMatchObject({ turnId: 't1', callId: 'c2', host: writer })
      expect((await a.coordination.readKey('k2'))?.result).toBeUndefined()
      await a.coordination.retire(writer)
      expect(await a.repair()).toEqual({ results: 0, turns: 0 })
    })
  })
}

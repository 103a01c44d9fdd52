import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import {
  createRoot,
  deferApprovals,
  definePlugin,
  defineTool,
  type JournalStore,
  memoryJournal,
  postgresJournal,
  type Root,
  SeamError,
  sqliteJournal,
} from 'seam-runtime'
import { beginTurn, sleep } from './kit.js'

const PG_URL = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: PG_URL, max: 2 })
afterAll(() => admin.end())

/** Each back end as two hosts would share it; a memory journal is one process's, so its "hosts" are one root. */
const backends: Record<string, () => (hostId: string) => JournalStore | undefined> = {
  memory: () => {
    let opened = false
    return () => {
      if (opened) return undefined
      opened = true
      return memoryJournal()
    }
  },
  sqlite: () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-trust-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    return (hostId) => sqliteJournal(join(dir, 'journal.db'), { hostId })
  },
  postgres: () => {
    const schema = `seam_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`
    onTestFinished(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    })
    return (hostId) => postgresJournal(PG_URL, { schema, hostId })
  },
}

/** `count` roots over one journal storage (a memory journal's are all the same root), closed when the test ends. */
async function hosts(backend: string, count: number, options: { ttlMs?: number } = {}): Promise<{ roots: Root[]; ran: string[] }> {
  const ran: string[] = []
  const open = backends[backend]!()
  const roots: Root[] = []
  for (let index = 0; index < count; index += 1) {
    const journal = open(`host-${index}`)
    if (journal === undefined) {
      roots.push(roots[0]!)
      continue
    }
    const root = await createRoot({
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          // A child plugin: a turn it owns is another owner than the root's.
          ctx.plugin(definePlugin({ name: 'other' }))
          ctx.addTool('note', defineTool({ description: 'Write a note.', input: z.object({ text: z.string() }), approval: 'always', execute: ({ text }) => { ran.push(text); return `wrote ${text}` } }))
        },
      }),
      journal,
      approval: deferApprovals(),
      operators: ['ops'],
      ...(options.ttlMs === undefined ? {} : { defaults: { approvalTtlMs: options.ttlMs } }),
    })
    onTestFinished(() => root.close())
    roots.push(root)
  }
  return { roots, ran }
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason)
  return SeamError.is(error) ? error.code : error === undefined ? undefined : String(error)
}

describe.each(Object.keys(backends))('parked calls on a %s journal, at the edges of trust', { timeout: 30_000 }, (backend) => {
  it('refuses a resume by any other session, principal or owner, in a turn or through root.resume, and runs nothing', async () => {
    const { roots: [a, b], ran } = await hosts(backend, 2)
    const turn = await beginTurn(a!)
    const parked = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"secret plan"}' })
    await a!.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    const token = parked.resumeToken!
    const strangers = [
      beginTurn(b!, { principal: { subjectId: 'mallory', roles: [] } }),
      beginTurn(b!, { session: 'session-2' }),
      beginTurn(b!, { owner: 'root/other' }),
    ]
    for (const stranger of await Promise.all(strangers)) expect(await codeOf(stranger.tools.resume(token))).toBe('APPROVAL_FORBIDDEN')
    expect(await codeOf(b!.resume(token, { principal: 'mallory' }))).toBe('APPROVAL_FORBIDDEN')
    expect(await codeOf(b!.resume(token, undefined as never))).toBe('INVALID_CALL')
    expect(ran).toEqual([])
    expect(await b!.journal.read(turn.turnId)).not.toContainEqual(expect.objectContaining({ kind: 'tool/result' }))

    // Its own caller, in a later turn of the same session, runs it; a stranger still gets no result.
    expect(await (await beginTurn(b!)).tools.resume(token)).toMatchObject({ status: 'completed', content: [{ text: 'wrote secret plan' }] })
    const stranger = await beginTurn(a!, { principal: { subjectId: 'mallory', roles: [] } })
    expect(await codeOf(stranger.tools.resume(token))).toBe('APPROVAL_FORBIDDEN')
    expect(await codeOf(a!.resume(token, { principal: { subjectId: 'mallory' } }))).toBe('APPROVAL_FORBIDDEN')
    expect(ran).toEqual(['secret plan'])
  })

  it('lets the root resume for the call principal or for a declared operator, and no one else', async () => {
    const { roots: [a, b], ran } = await hosts(backend, 2)
    const turn = await beginTurn(a!)
    const first = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"one"}' })
    const second = await turn.tools.execute({ callId: 'c2', name: 'note', arguments: '{"text":"two"}' })
    await a!.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    await a!.approvals.decide('c2', 'allowed-once', { by: 'ann' })
    expect(await b!.resume(first.resumeToken!, { principal: 'user-1' })).toMatchObject({ status: 'completed' })
    expect(await b!.resume(second.resumeToken!, { principal: 'ops' })).toMatchObject({ status: 'completed' })
    expect(ran.sort()).toEqual(['one', 'two'])
  })

  it('lists resume tokens only to the call principal or an operator', async () => {
    const { roots: [a, b] } = await hosts(backend, 2)
    const mine = await (await beginTurn(a!)).tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"one"}' })
    const theirs = await (await beginTurn(a!, { principal: { subjectId: 'user-2', roles: [] }, session: 'session-2' })).tools.execute({ callId: 'c2', name: 'note', arguments: '{"text":"two"}' })
    const tokens = async (query?: Parameters<Root['approvals']['pending']>[0]) => (await b!.approvals.pending(query)).map((p) => [p.callId, p.resumeToken])
    expect(await tokens()).toEqual([
      ['c1', undefined],
      ['c2', undefined],
    ])
    expect(await tokens({ as: 'user-1' })).toEqual([
      ['c1', mine.resumeToken],
      ['c2', undefined],
    ])
    expect(await tokens({ principal: 'user-2' })).toEqual([['c2', theirs.resumeToken]])
    expect(await tokens({ principal: 'user-2', as: 'user-1' })).toEqual([['c2', undefined]])
    expect(await tokens({ as: { subjectId: 'ops' } })).toEqual([
      ['c1', mine.resumeToken],
      ['c2', theirs.resumeToken],
    ])
    expect((await b!.approvals.decide('c1', 'allowed-once', { by: 'ann' })).resumeToken).toBeUndefined()
    expect((await b!.approvals.decide('c2', 'allowed-once', { by: 'ann', as: 'user-2' })).resumeToken).toBe(theirs.resumeToken)
  })

  it('honours every decision that returned and refuses every one after the deadline, over 60 races with expiry', async () => {
    const ttlMs = 60
    const { roots: [a, b], ran } = await hosts(backend, 2, { ttlMs })
    const turn = await beginTurn(a!)
    const tally = { honoured: 0, expired: 0 }
    for (let race = 0; race < 60; race += 1) {
      const callId = `c${race}`
      const parked = await turn.tools.execute({ callId, name: 'note', arguments: JSON.stringify({ text: callId }) })
      // Read without a sweep (as `pending()` would make); a heartbeat's sweep may race too.
      const { askedAt } = (await a!.journal.coordination.parked({ token: parked.resumeToken!, settled: true }))[0]!
      // The decision is sent a little before or after the deadline; the sweep at it or just past it.
      const deadline = askedAt + ttlMs - Date.now()
      const decision = sleep(deadline - 6 + (race % 10)).then(() => a!.approvals.decide(callId, 'allowed-once', { by: 'ann' }))
      const sweep = sleep(deadline + (race % 4)).then(() => b!.approvals.expire())
      const [decided] = await Promise.allSettled([decision, sweep])
      // A later sweep on either host finds nothing it may expire once a decision landed.
      await sleep(2)
      await a!.approvals.expire()
      const outcome = await b!.resume(parked.resumeToken!, { principal: 'user-1' })
      if (decided.status === 'fulfilled') {
        expect(outcome, callId).toMatchObject({ status: 'completed', content: [{ text: `wrote ${callId}` }] })
        tally.honoured += 1
      } else {
        expect((decided.reason as SeamError).code, callId).toBe('APPROVAL_EXPIRED')
        expect(outcome, callId).toMatchObject({ status: 'denied', code: 'APPROVAL_TIMEOUT' })
        tally.expired += 1
      }
    }
    expect(tally.honoured + tally.expired).toBe(60)
    expect(ran).toHaveLength(tally.honoured)
    const results = (await a!.journal.read(turn.turnId)).filter((event) => event.kind === 'tool/result')
    expect(results).toHaveLength(60)
  })
})

describe('the decision deadline of a parked call', () => {
  it("is its parking host's approvalTtlMs: a host with a shorter one neither expires it early nor may decide it late", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-ttl-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const plugin = definePlugin({
      name: 'root',
      setup: (ctx) => void ctx.addTool('note', defineTool({ description: 'Note.', input: z.object({}), approval: 'always', execute: () => 'noted' })),
    })
    const open = async (hostId: string, approvalTtlMs: number) => {
      const root = await createRoot({ plugin, journal: sqliteJournal(join(dir, 'journal.db'), { hostId }), approval: deferApprovals(), defaults: { approvalTtlMs } })
      onTestFinished(() => root.close())
      return root
    }
    const [patient, hasty] = [await open('patient', 60_000), await open('hasty', 50)]
    const slow = await (await beginTurn(patient)).tools.execute({ callId: 'slow', name: 'note', arguments: '{}' })
    await (await beginTurn(hasty)).tools.execute({ callId: 'quick', name: 'note', arguments: '{}' })
    await sleep(80)
    // Past the hasty host's TTL, only its own call expires there.
    expect(await hasty.approvals.expire()).toBe(1)
    expect((await hasty.approvals.pending({ as: 'user-1' })).map((p) => p.callId)).toEqual(['slow'])
    // Past its own deadline, the patient host may not decide the hasty host's call.
    const late = await (await beginTurn(hasty)).tools.execute({ callId: 'late', name: 'note', arguments: '{}' })
    await sleep(80)
    expect(await codeOf(patient.approvals.decide('late', 'allowed-once', { by: 'ann' }))).toBe('APPROVAL_EXPIRED')
    expect(await patient.resume(late.resumeToken!, { principal: 'user-1' })).toMatchObject({ status: 'denied', code: 'APPROVAL_TIMEOUT' })
    // Within its own deadline, the hasty host may decide the patient host's call.
    await hasty.approvals.decide('slow', 'allowed-once', { by: 'ann' })
    expect(await hasty.resume(slow.resumeToken!, { principal: 'user-1' })).toMatchObject({ status: 'completed', value: 'noted' })
  })
})

describe('createRoot operators', () => {
  it('refuses operators that are not a list of subjectIds', async () => {
    const plugin = definePlugin({ name: 'root' })
    for (const operators of ['ops', [''], [7]]) {
      expect(await codeOf(createRoot({ plugin, operators: operators as never }))).toBe('INVALID_OPTIONS')
    }
  })
})


import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { stallingProxy } from '../../../test/stalling-proxy.js'
import { begin, call, describeJournalContract, result } from './contract.test-suite.js'
import { parkedCall } from './coordination.test-suite.js'
import { postgresJournal, redactConnectionString } from './postgres.js'
import type { JournalStore } from '../../seams/journal.js'

const url = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: url, max: 2 })
afterAll(() => admin.end())

/** A schema name of its own for one test, dropped with everything in it when the test finishes. */
function testSchema(): string {
  const schema = `seam_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`
  onTestFinished(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  })
  return schema
}

/** Opens a store and closes it when the test finishes. */
function open(schema: string, hostId?: string): JournalStore {
  const store = postgresJournal(url, { schema, hostId })
  onTestFinished(() => store.close())
  return store
}

describeJournalContract('postgres', {
  shared: true,
  async storage() {
    const schema = testSchema()
    const stores: JournalStore[] = []
    return {
      open(options = {}) {
        const store = postgresJournal(url, { schema, ...options })
        stores.push(store)
        return store
      },
      async dispose() {
        await Promise.all(stores.map((store) => store.close()))
      },
    }
  },
})

describe('postgresJournal', () => {
  it('stamps its host id on every event it writes, repairs included', async () => {
    const store = open(testSchema(), 'host-a')
    await store.append(begin('t1', 1))
    await store.append(call('t1', 2, 'c1'))
    await store.repair()
    expect((await store.read('t1')).map((event) => event.host)).toEqual(['host-a', 'host-a', 'host-a', 'host-a'])
  })

  it('tries again after a failed start: a database created after the store opened is used', async () => {
    const database = `seam_late_${randomUUID().replaceAll('-', '').slice(0, 12)}`
    const late = new URL(url)
    late.pathname = `/${database}`
    const store = postgresJournal(late.toString(), {})
    onTestFinished(async () => {
      await store.close()
      await admin.query(`DROP DATABASE IF EXISTS ${database}`)
    })
    await expect(store.append(begin('t1', 1))).rejects.toThrow(/does not exist/)
    await admin.query(`CREATE DATABASE ${database}`)
    await store.append(begin('t1', 1))
    expect(await store.read('t1')).toHaveLength(1)
  })

  it('creates its tables once when two hosts start together on a new schema', async () => {
    const schema = testSchema()
    const a = open(schema, 'host-a')
    const b = open(schema, 'host-b')
    await Promise.all([a.append(begin('t1', 1)), b.append(begin('t2', 1))])
    expect(await a.tail(10)).toHaveLength(2)
    const { rows } = await admin.query('SELECT version FROM ' + schema + '.seam_journal_meta')
    expect(rows).toEqual([{ version: 5 }])
  })

  it('adds the coordination tables to a version 1 journal and keeps its events', async () => {
    const schema = testSchema()
    const old = open(schema, 'host-a')
    await old.append(begin('t1', 1))
    await old.close()
    const tables = ['parked', 'keys', 'grants', 'hosts', 'oauth', 'tasks'].map((table) => `${schema}.seam_journal_${table}`).join(', ')
    await admin.query(`DROP TABLE ${tables}; UPDATE ${schema}.seam_journal_meta SET version = 1`)
    const upgraded = open(schema, 'host-a')
    expect(await upgraded.read('t1')).toHaveLength(1)
    await upgraded.coordination.grant({ session: 's1', subjectId: 'u1', source: 'x', fingerprint: 'f' })
    expect((await admin.query(`SELECT version FROM ${schema}.seam_journal_meta`)).rows).toEqual([{ version: 5 }])
  })

  it('upgrades a version 2 schema to fencing (lease epochs) and keeps its events, parked calls, keys, grants and heartbeats', async () => {
    const schema = testSchema()
    const old = postgresJournal(url, { schema, hostId: 'host-old' })
    await old.append(begin('t1', 1))
    await old.append(call('t1', 2, 'c1'))
    await old.coordination.park(parkedCall('t1', 'c9'))
    await old.coordination.claimKey('k1', { turnId: 't1', callId: 'c1', host: 'host-old' })
    await old.coordination.grant({ session: 's1', subjectId: 'u1', source: 'x', fingerprint: 'f' })
    await old.close()
    // What a version 2 build leaves: the hosts table without the fencing columns, one beat of a host now past its lease.
    await admin.query(`ALTER TABLE ${schema}.seam_journal_hosts DROP COLUMN epoch, DROP COLUMN fenced_at; DROP TABLE ${schema}.seam_journal_oauth, ${schema}.seam_journal_tasks; UPDATE ${schema}.seam_journal_meta SET version = 2`)
    await admin.query(`INSERT INTO ${schema}.seam_journal_hosts (host, beat_at, lease_ms) VALUES ('host-old', $1, 1000)`, [Date.now() - 60_000])
    const columns = async () =>
      (await admin.query(`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'seam_journal_hosts' ORDER BY ordinal_position`, [schema])).rows.map(
        (row: { name: string }) => row.name,
      )
    expect(await columns()).toEqual(['host', 'beat_at', 'lease_ms'])
    const upgraded = open(schema, 'host-new')
    expect((await upgraded.read('t1')).map((event) => event.kind)).toEqual(['turn/begin', 'tool/call'])
    expect((await admin.query(`SELECT version FROM ${schema}.seam_journal_meta`)).rows).toEqual([{ version: 5 }])
    expect(await columns()).toEqual(['host', 'beat_at', 'lease_ms', 'epoch', 'fenced_at'])
    expect(await upgraded.coordination.parked()).toMatchObject([{ turnId: 't1', callId: 'c9' }])
    expect(await upgraded.coordination.readKey('k1')).toMatchObject({ callId: 'c1', host: 'host-old' })
    expect(await upgraded.coordination.grants()).toMatchObject([{ session: 's1', fingerprint: 'f' }])
    // The upgraded store registers its own lease, and its repair fences the old host's (a beat without an epoch).
    await upgraded.coordination.heartbeat('host-new', 60_000)
    expect(await upgraded.repair()).toEqual({ results: 1, turns: 1 })
    const hosts = await admin.query(`SELECT host, epoch IS NOT NULL AS leased, fenced_at IS NOT NULL AS fenced FROM ${schema}.seam_journal_hosts ORDER BY host`)
    expect(hosts.rows).toEqual([
      { host: 'host-new', leased: true, fenced: false },
      { host: 'host-old', leased: false, fenced: true },
    ])
    await upgraded.append(begin('t2', 1))
    expect(await upgraded.read('t2')).toHaveLength(1)
  })

  it('refuses a schema whose seam_journal_events table is not a journal, and leaves the table alone', async () => {
    const schema = testSchema()
    await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.seam_journal_events (note text)`)
    await admin.query(`INSERT INTO ${schema}.seam_journal_events VALUES ('mine')`)
    const store = open(schema)
    await expect(store.append(begin('t1', 1))).rejects.toMatchObject({
      code: 'JOURNAL_CORRUPT',
      message: expect.stringContaining(schema),
    })
    expect((await admin.query(`SELECT note FROM ${schema}.seam_journal_events`)).rows).toEqual([{ note: 'mine' }])
  })

  it('fails its operations, and still closes, when the server cannot be reached', async () => {
    const store = postgresJournal('postgres://postgres:secret@127.0.0.1:1/none')
    await expect(store.append(result('t1', 1, 'c1'))).rejects.toThrow(/ECONNREFUSED|connect/)
    await store.close()
  })

  it('shows its location without the password', () => {
    const store = postgresJournal('postgres://journal:s3cret@db.internal:5432/app?sslpassword=x2', { schema: 'seam' })
    onTestFinished(() => store.close())
    expect(store.location).toBe('postgres://journal:***@db.internal:5432/app?sslpassword=*** (schema seam)')
    expect(redactConnectionString("host=db password='a b' user=journal")).toBe('host=db password=*** user=journal')
  })
})

describe('postgres journal behind a network that stalls', () => {
  it('closes within its bound while an append waits on the dead link, and fails that append', async () => {
    const schema = testSchema()
    const proxy = await stallingProxy(url)
    const store = postgresJournal(proxy.url, { schema, closeTimeoutMs: 300 })
    await store.append(begin('t1', 1))
    proxy.stall()
    const stuck = store.append(call('t1', 2, 'c1'))
    const stuckSettled = stuck.then(
      () => 'appended',
      () => 'failed',
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    const started = performance.now()
    const closed = await Promise.race([store.close().then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still closing after 5 s'), 5_000))])
    expect(closed).toBe('closed')
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(await stuckSettled).toBe('failed')
  })
})

describe('postgresJournal group commit', () => {
  it('sends appends that arrive while a commit is in flight together, as one commit, in push order', async () => {
    const schema = testSchema()
    const store = open(schema, 'host-a')
    await store.append(begin('warm', 1))
    const batches: number[] = []
    store.onCommit!((events) => batches.push(events))
    // 16 turns, each appending its events one after another, as turns do.
    const turn = async (index: number) => {
      const turnId = `t${index}`
      await store.append(begin(turnId, 1))
      for (let seq = 2; seq <= 9; seq += 1) await store.append(call(turnId, seq, `c${seq}`))
    }
    await Promise.all(Array.from({ length: 16 }, (_, index) => turn(index)))
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(16 * 9)
    // Far fewer commits than events: each round of the 16 turns goes out together.
    expect(batches.length).toBeLessThanOrEqual(16 * 9 / 4)
    expect(Math.max(...batches)).toBeGreaterThan(8)
    const { rows } = await admin.query(`SELECT turn_id, seq FROM ${schema}.seam_journal_events WHERE turn_id <> 'warm' ORDER BY id`)
    for (let index = 0; index < 16; index += 1) {
      const seqs = rows.filter((row: { turn_id: string }) => row.turn_id === `t${index}`).map((row: { seq: number }) => row.seq)
      expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    }
  })

  it.each([
    ['without a lease', false],
    ['holding a lease', true],
  ])('fails exactly the duplicates of a batch, a duplicate inside the batch included, and lands the rest in push order (%s)', async (_, leased) => {
    const schema = testSchema()
    const store = open(schema, 'host-a')
    if (leased) await store.coordination.heartbeat('host-a', 60_000)
    await store.append(begin('t1', 1))
    await store.append(call('t1', 2, 'c1'))
    const batches: number[] = []
    store.onCommit!((events) => batches.push(events))
    const settled = await Promise.allSettled([
      store.append(call('t1', 6, 'c4')),
      store.append(call('t1', 4, 'c1')), // (call, kind) taken by seq 2
      store.append(call('t1', 5, 'c3')),
      store.append(call('t1', 5, 'c3')), // the same event twice in one batch: the second is the duplicate
      store.append(call('t1', 3, 'c2')),
    ])
    expect(batches).toEqual([5])
    expect(settled.map((outcome) => (outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as { code: string }).code))).toEqual([
      'ok',
      'JOURNAL_DUPLICATE',
      'ok',
      'JOURNAL_DUPLICATE',
      'ok',
    ])
    expect((await store.read('t1')).map((event) => `${event.seq} ${'callId' in event ? event.callId : ''}`)).toEqual(['1 ', '2 c1', '3 c2', '5 c3', '6 c4'])
    const { rows } = await admin.query(`SELECT seq, xmin::text AS tx FROM ${schema}.seam_journal_events ORDER BY id`)
    expect(rows.map((row: { seq: number }) => row.seq)).toEqual([1, 2, 6, 5, 3])
    // The rest of the batch still lands in one transaction, not one commit per event.
    expect(new Set(rows.slice(2).map((row: { tx: string }) => row.tx)).size).toBe(1)
  })

  it('stores each payload of a batch as the text JSON.stringify wrote: quotes, backslashes, control characters and unicode', async () => {
    const schema = testSchema()
    const store = open(schema, 'host-a')
    await store.coordination.heartbeat('host-a', 60_000)
    await store.append(begin('t1', 1))
    const texts = ['say "hi"', 'back\\slash \\" \\u0041', 'tab\t nl\n cr\r \u0001 \u001f', 'é ß 中文 😀 \u2028\u2029', '{"looks":"like JSON"}, [1]', '']
    const events = texts.map((text, index) => call('t1', index + 2, `c${index}`, text))
    const batches: number[] = []
    store.onCommit!((events) => batches.push(events))
    await Promise.all(events.map((event) => store.append(event)))
    expect(batches).toEqual([texts.length])
    const stored = events.map((event) => ({ ...event, host: 'host-a' }))
    expect((await store.read('t1')).slice(1)).toEqual(stored)
    const { rows } = await admin.query(`SELECT payload::text AS text FROM ${schema}.seam_journal_events WHERE kind = 'tool/call' ORDER BY id`)
    expect(rows.map((row: { text: string }) => row.text)).toEqual(stored.map((event) => JSON.stringify(event)))
  })

  it('commits each event of a batch alone when one value fails the statement, so only that event fails', async () => {
    const store = open(testSchema(), 'host-a')
    await store.append(begin('t1', 1))
    const settled = await Promise.allSettled([
      store.append(call('t1', 2, 'c1')),
      // PostgreSQL text cannot hold NUL: this row alone fails the batch's statement.
      store.append(call('t1', 3, 'c\u0000bad')),
      store.append(call('t1', 4, 'c3')),
    ])
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((await store.read('t1')).map((event) => event.seq)).toEqual([1, 2, 4])
  })

  it('refuses a whole batch of a fenced store in its own statement, and none of it lands', async () => {
    const schema = testSchema()
    const repairer = open(schema, 'host-a')
    const fenced = open(schema, 'host-b')
    await repairer.coordination.heartbeat('host-a', 60_000)
    await fenced.coordination.heartbeat('host-b', 1)
    await fenced.append(begin('t1', 1))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await repairer.repair()).toEqual({ results: 0, turns: 1 })
    const batches: number[] = []
    fenced.onCommit!((events) => batches.push(events))
    const settled = await Promise.allSettled([2, 3, 4].map((seq) => fenced.append(call('t1', seq, `c${seq}`))))
    expect(batches).toEqual([3])
    expect(settled.map((outcome) => outcome.status === 'rejected' && (outcome.reason as { code: string }).code)).toEqual(['HOST_FENCED', 'HOST_FENCED', 'HOST_FENCED'])
    expect((await repairer.read('t1')).map((event) => event.kind)).toEqual(['turn/begin', 'turn/end'])
  })

  it('commits each append on its own with groupCommit: false', async () => {
    const store = postgresJournal(url, { schema: testSchema(), hostId: 'host-a', groupCommit: false })
    onTestFinished(() => store.close())
    await Promise.all([store.append(begin('t1', 1)), store.append(call('t1', 2, 'c1')), store.append(call('t1', 3, 'c2'))])
    expect((await store.read('t1')).map((event) => event.seq)).toEqual([1, 2, 3])
  })
})

import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { stallingProxy } from '../../../test/stalling-proxy.js'
import { begin, call, describeJournalContract, result } from './contract.test-suite.js'
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
    expect(rows).toEqual([{ version: 2 }])
  })

  it('adds the coordination tables to a version 1 journal and keeps its events', async () => {
    const schema = testSchema()
    const old = open(schema, 'host-a')
    await old.append(begin('t1', 1))
    await old.close()
    const tables = ['parked', 'keys', 'grants', 'hosts'].map((table) => `${schema}.seam_journal_${table}`).join(', ')
    await admin.query(`DROP TABLE ${tables}; UPDATE ${schema}.seam_journal_meta SET version = 1`)
    const upgraded = open(schema, 'host-a')
    expect(await upgraded.read('t1')).toHaveLength(1)
    await upgraded.coordination.grant({ session: 's1', subjectId: 'u1', source: 'x', fingerprint: 'f' })
    expect((await admin.query(`SELECT version FROM ${schema}.seam_journal_meta`)).rows).toEqual([{ version: 2 }])
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

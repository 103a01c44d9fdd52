import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import type { OAuthRecord, OAuthTokenStore } from '../../seams/oauth-tokens.js'
import { begin } from './contract.test-suite.js'
import { postgresJournal } from './postgres.js'
import { sqliteJournal } from './sqlite.js'
import { openSqlite } from './sqlite-driver.js'

const url = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: url, max: 2 })
afterAll(() => admin.end())

const record: OAuthRecord = {
  tokens: { access_token: 'at-journal-0123456789', token_type: 'Bearer', refresh_token: 'rt-journal-0123456789', expires_in: 3600 },
  client: { client_id: 'dcr-1', client_secret: 'client-secret-0123' },
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seam-oauth-'))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function testSchema(): string {
  const schema = `seam_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`
  onTestFinished(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  })
  return schema
}

/** Two hosts on one journal database: what one stores, the other reads; overwrite and delete reach both. */
async function sharedBetween(a: OAuthTokenStore, b: OAuthTokenStore): Promise<void> {
  expect(await b.get('srv https://mcp.example/mcp')).toBeUndefined()
  await a.set('srv https://mcp.example/mcp', record)
  expect(await b.get('srv https://mcp.example/mcp')).toEqual(record)
  const refreshed = { ...record, tokens: { ...record.tokens!, access_token: 'at-journal-refreshed-1' } }
  await b.set('srv https://mcp.example/mcp', refreshed)
  expect(await a.get('srv https://mcp.example/mcp')).toEqual(refreshed)
  expect(await a.get('other https://mcp.example/mcp')).toBeUndefined()
  await a.delete('srv https://mcp.example/mcp')
  expect(await b.get('srv https://mcp.example/mcp')).toBeUndefined()
}

describe('the journal database as the OAuth token store', () => {
  it('SQLite: hosts on one file share the records, kept in their own table and out of the events', async () => {
    const path = join(tempDir(), 'journal.db')
    const a = sqliteJournal(path, { hostId: 'a' })
    const b = sqliteJournal(path, { hostId: 'b' })
    onTestFinished(() => Promise.all([a.close(), b.close()]).then(() => undefined))
    await sharedBetween(a.oauthTokens, b.oauthTokens)
    await a.oauthTokens.set('k', record)
    expect(await a.tail(100)).toEqual([])
  })

  it('SQLite: upgrades a version 3 journal with the OAuth table, keeping its events', async () => {
    const path = join(tempDir(), 'journal.db')
    const old = sqliteJournal(path)
    await old.append(begin('t1', 1))
    await old.close()
    const db = openSqlite(path)
    db.exec('DROP TABLE seam_journal_oauth; PRAGMA user_version = 3')
    db.close()
    const upgraded = sqliteJournal(path)
    onTestFinished(() => upgraded.close())
    expect(await upgraded.read('t1')).toHaveLength(1)
    await upgraded.oauthTokens.set('k', record)
    expect(await upgraded.oauthTokens.get('k')).toEqual(record)
    const check = openSqlite(path, { readonly: true })
    onTestFinished(() => check.close())
    expect(check.prepare('PRAGMA user_version', { pluck: true }).get()).toBe(4)
  })

  it('PostgreSQL: hosts on one schema share the records, in seam_journal_oauth', async () => {
    const schema = testSchema()
    const a = postgresJournal(url, { schema, hostId: 'a' })
    const b = postgresJournal(url, { schema, hostId: 'b' })
    onTestFinished(() => Promise.all([a.close(), b.close()]).then(() => undefined))
    await sharedBetween(a.oauthTokens, b.oauthTokens)
    await a.oauthTokens.set('k', record)
    const rows = await admin.query(`SELECT key, record FROM ${schema}.seam_journal_oauth`)
    expect(rows.rows).toEqual([{ key: 'k', record }])
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${schema}.seam_journal_events`)).rows).toEqual([{ n: 0 }])
  })

  it('PostgreSQL: upgrades a version 3 schema with the OAuth table', async () => {
    const schema = testSchema()
    const old = postgresJournal(url, { schema })
    await old.oauthTokens.get('warm-up')
    await old.close()
    await admin.query(`DROP TABLE ${schema}.seam_journal_oauth; UPDATE ${schema}.seam_journal_meta SET version = 3`)
    const upgraded = postgresJournal(url, { schema })
    onTestFinished(() => upgraded.close())
    await upgraded.oauthTokens.set('k', record)
    expect(await upgraded.oauthTokens.get('k')).toEqual(record)
    expect((await admin.query(`SELECT version FROM ${schema}.seam_journal_meta`)).rows).toEqual([{ version: 4 }])
  })
})

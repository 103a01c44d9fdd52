import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import { begin, call, describeJournalContract, now, result } from './contract.test-suite.js'
import { parkedCall } from './coordination.test-suite.js'
import { type SqliteJournalOptions, sqliteJournal } from './sqlite.js'
import { openSqlite, type SqliteDriver } from './sqlite-driver.js'
import { nativeModuleFault } from './sqlite-driver-better.js'
import { sqliteDriversUnderTest } from './sqlite-drivers.test-suite.js'
import type { JournalStore } from '../../seams/journal.js'

/** A temporary folder removed when the test finishes. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seam-journal-'))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function sqliteBackend(defaults: SqliteJournalOptions) {
  return {
    shared: true,
    async storage() {
      const path = join(tempDir(), 'journal.db')
      const stores: JournalStore[] = []
      return {
        open(options = {}) {
          const store = sqliteJournal(path, { ...defaults, ...options })
          stores.push(store)
          return store
        },
        async dispose() {
          await Promise.all(stores.map((store) => store.close()))
        },
      }
    },
  }
}

// The same contract for each driver this Node runs (see sqliteDriversUnderTest).
for (const driver of sqliteDriversUnderTest()) {
  describeJournalContract(`sqlite (${driver})`, sqliteBackend({ driver }))
  describeJournalContract(`sqlite (${driver}) without group commit`, sqliteBackend({ driver, groupCommit: false, synchronous: 'NORMAL' }))
}

function openError(path: string, driver: SqliteDriver): SeamError {
  try {
    sqliteJournal(path, { driver }).close()
  } catch (error) {
    if (SeamError.is(error)) return error
    throw error
  }
  throw new Error(`expected opening ${path} to fail`)
}

describe.each(sqliteDriversUnderTest())('sqliteJournal (%s)', (driver) => {
  it('refuses a file of garbage bytes with JOURNAL_CORRUPT naming the file, and leaves it as it was', () => {
    const path = join(tempDir(), 'garbage.db')
    const garbage = Buffer.from(Array.from({ length: 8192 }, (_, index) => (index * 7919) % 251))
    writeFileSync(path, garbage)
    const error = openError(path, driver)
    expect(error.code).toBe('JOURNAL_CORRUPT')
    expect(error.message).toContain(path)
    expect(error.details).toEqual({ file: path })
    expect(readFileSync(path).equals(garbage)).toBe(true)
  })

  it('refuses a SQLite database of another application with JOURNAL_CORRUPT naming the file, and leaves it as it was', () => {
    const path = join(tempDir(), 'orders.db')
    const foreign = openSqlite(path, { driver })
    foreign.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT); INSERT INTO orders (item) VALUES ('tea')")
    foreign.close()
    const error = openError(path, driver)
    expect(error.code).toBe('JOURNAL_CORRUPT')
    expect(error.message).toContain(path)
    const reopened = openSqlite(path, { driver, readonly: true })
    expect(reopened.prepare('SELECT item FROM orders', { pluck: true }).all()).toEqual(['tea'])
    expect(reopened.prepare('PRAGMA journal_mode', { pluck: true }).get()).toBe('delete')
    reopened.close()
  })

  it('refuses a journal written with another schema version', () => {
    const path = join(tempDir(), 'journal.db')
    sqliteJournal(path, { driver }).close()
    const db = openSqlite(path, { driver })
    db.exec('PRAGMA user_version = 99')
    db.close()
    const error = openError(path, driver)
    expect(error.code).toBe('JOURNAL_CORRUPT')
    expect(error.message).toMatch(/schema version 99/)
  })

  it('adds the coordination tables to a version 1 journal and keeps its events', async () => {
    const path = join(tempDir(), 'journal.db')
    const old = sqliteJournal(path, { driver })
    await old.append(begin('t1', 1))
    await old.close()
    const db = openSqlite(path, { driver })
    for (const table of ['parked', 'keys', 'grants', 'hosts']) db.exec(`DROP TABLE seam_journal_${table}`)
    db.exec('PRAGMA user_version = 1')
    db.close()
    const upgraded = sqliteJournal(path, { driver })
    onTestFinished(() => upgraded.close())
    expect(await upgraded.read('t1')).toHaveLength(1)
    await upgraded.coordination.grant({ session: 's1', subjectId: 'u1', source: 'x', fingerprint: 'f' })
    expect(await upgraded.coordination.hasGrant({ session: 's1', subjectId: 'u1', source: 'x', fingerprint: 'f' })).toBe(true)
  })

  it('upgrades a version 2 journal to fencing (lease epochs) and keeps its events, parked calls, keys, grants and heartbeats', async () => {
    const path = join(tempDir(), 'journal.db')
    const old = sqliteJournal(path, { driver, hostId: 'host-old' })
    await old.append(begin('t1', 1))
    await old.append(call('t1', 2, 'c1'))
    await old.coordination.park(parkedCall('t1', 'c9'))
    await old.coordination.claimKey('k1', { turnId: 't1', callId: 'c1', host: 'host-old' })
    await old.coordination.grant({ session: 's1', subjectId: 'u1', source: 'x', fingerprint: 'f' })
    await old.close()
    // What a version 2 build leaves: the hosts table without the fencing columns, one beat of a host now past its lease.
    const db = openSqlite(path, { driver })
    db.exec('ALTER TABLE seam_journal_hosts DROP COLUMN epoch; ALTER TABLE seam_journal_hosts DROP COLUMN fenced_at; PRAGMA user_version = 2')
    db.prepare('INSERT INTO seam_journal_hosts (host, beat_at, lease_ms) VALUES (?, ?, ?)').run('host-old', Date.now() - 60_000, 1_000)
    expect(db.prepare('SELECT name FROM pragma_table_info(?)', { pluck: true }).all('seam_journal_hosts')).toEqual(['host', 'beat_at', 'lease_ms'])
    db.close()
    const upgraded = sqliteJournal(path, { driver, hostId: 'host-new' })
    onTestFinished(() => upgraded.close())
    const check = openSqlite(path, { driver, readonly: true })
    onTestFinished(() => check.close())
    expect(check.prepare('PRAGMA user_version', { pluck: true }).get()).toBe(4)
    expect(check.prepare('SELECT name FROM pragma_table_info(?)', { pluck: true }).all('seam_journal_hosts')).toEqual(['host', 'beat_at', 'lease_ms', 'epoch', 'fenced_at'])
    expect((await upgraded.read('t1')).map((event) => event.kind)).toEqual(['turn/begin', 'tool/call'])
    expect(await upgraded.coordination.parked()).toMatchObject([{ turnId: 't1', callId: 'c9' }])
    expect(await upgraded.coordination.readKey('k1')).toMatchObject({ callId: 'c1', host: 'host-old' })
    expect(await upgraded.coordination.grants()).toMatchObject([{ session: 's1', fingerprint: 'f' }])
    // The upgraded store registers its own lease, and its repair fences the old host's (a beat without an epoch).
    await upgraded.coordination.heartbeat('host-new', 60_000)
    expect(await upgraded.repair()).toEqual({ results: 1, turns: 1 })
    const hosts = check.prepare('SELECT host, epoch IS NOT NULL AS leased, fenced_at IS NOT NULL AS fenced FROM seam_journal_hosts ORDER BY host').all()
    expect(hosts).toEqual([
      { host: 'host-new', leased: 1, fenced: 0 },
      { host: 'host-old', leased: 0, fenced: 1 },
    ])
    await upgraded.append(begin('t2', 1))
    expect(await upgraded.read('t2')).toHaveLength(1)
  })

  it('creates the parent folders of a new journal and writes it in WAL mode', async () => {
    const path = join(tempDir(), 'a', 'b', 'journal.db')
    const store = sqliteJournal(path, { driver })
    await store.append(begin('t1', 1))
    const db = openSqlite(path, { driver, readonly: true })
    expect(db.prepare('PRAGMA journal_mode', { pluck: true }).get()).toBe('wal')
    db.close()
    await store.close()
    expect(store.location).toBe(path)
  })

  it('writes the other appends of a group commit when one of them is a duplicate', async () => {
    const store = sqliteJournal(join(tempDir(), 'journal.db'), { driver })
    onTestFinished(() => store.close())
    await store.append(call('t1', 1, 'c1'))
    // Appended in one tick, so they share one transaction.
    const settled = await Promise.allSettled([
      store.append(result('t1', 2, 'c1')),
      store.append(result('t1', 3, 'c1')),
      store.append(call('t2', 1, 'c1')),
    ])
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'JOURNAL_DUPLICATE' })
    expect((await store.read('t1')).map((event) => event.seq)).toEqual([1, 2])
    expect(await store.read('t2')).toHaveLength(1)
  })

  it('stamps its host id on every event it writes, repairs included', async () => {
    const store = sqliteJournal(join(tempDir(), 'journal.db'), { driver, hostId: 'host-a' })
    onTestFinished(() => store.close())
    await store.append(begin('t1', 1))
    await store.append(call('t1', 2, 'c1'))
    expect(await store.repair()).toEqual({ results: 1, turns: 1 })
    expect((await store.read('t1')).map((event) => event.host)).toEqual(['host-a', 'host-a', 'host-a', 'host-a'])
  })

  it('reads and repairs rows written before stores stamped a host', async () => {
    const path = join(tempDir(), 'journal.db')
    sqliteJournal(path, { driver }).close()
    const db = openSqlite(path, { driver })
    db.prepare("INSERT INTO seam_journal_turns (no, turn_id) VALUES (1, 't1')").run()
    const insert = db.prepare('INSERT INTO seam_journal_events (turn, seq, kind, call_id, at, host, payload) VALUES (1, ?, ?, ?, ?, NULL, ?)')
    for (const event of [now(begin('t1', 1)), now(call('t1', 2, 'c1'))]) {
      insert.run(event.seq, event.kind, 'callId' in event ? event.callId : null, event.at, JSON.stringify(event))
    }
    db.close()
    const store = sqliteJournal(path, { driver })
    onTestFinished(() => store.close())
    expect((await store.read('t1')).map((event) => event.host)).toEqual([undefined, undefined])
    expect(await store.repair()).toEqual({ results: 1, turns: 1 })
    expect((await store.read('t1')).slice(2)).toMatchObject([
      { kind: 'tool/result', code: 'OUTCOME_UNKNOWN', host: `${hostname()}:${process.pid}` },
      { kind: 'turn/end', reason: 'interrupted' },
    ])
  })
})

describe('a better-sqlite3 whose compiled module cannot load', () => {
  it('is told as JOURNAL_UNAVAILABLE with the cause and how to build it, from the loaders’ own errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-native-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const require = createRequire(import.meta.url)
    // What better-sqlite3 meets when its install script never ran: `bindings` finds no build.
    const bindings = require(require.resolve('bindings', { paths: [require.resolve('better-sqlite3')] })) as (options: object) => unknown
    const notBuilt = catchError(() => bindings({ bindings: 'better_sqlite3.node', module_root: dir }))
    // ... and when it was built for another Node: the dynamic loader refuses the file.
    const file = join(dir, 'better_sqlite3.node')
    writeFileSync(file, 'not a shared object')
    const otherNode = catchError(() => process.dlopen({ exports: {} }, file))

    const missing = nativeModuleFault(notBuilt)
    expect(missing).toMatchObject({ code: 'JOURNAL_UNAVAILABLE', cause: notBuilt })
    expect(missing?.message).toBe("The SQLite journal needs better-sqlite3's compiled module, which is not built (its install script did not run).")
    expect(missing?.hint).toContain('npm rebuild better-sqlite3')
    expect(missing?.hint).toContain('npm install-scripts approve better-sqlite3')
    expect(nativeModuleFault(otherNode)?.message).toContain(`was built for another Node.js version than this one (${process.version})`)
    // Anything else is left as it was (a SQLite error, a permission error).
    expect(nativeModuleFault(new BetterSqlite3.SqliteError('disk I/O error', 'SQLITE_IOERR'))).toBeUndefined()
    expect(nativeModuleFault(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }))).toBeUndefined()
  })
})

function catchError(run: () => unknown): Error {
  try {
    run()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

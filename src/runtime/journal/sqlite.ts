import type { OAuthTokenStore } from '../../seams/oauth-tokens.js'
import { resolve } from 'node:path'
import { type EventRow, checkEvent, closedError, duplicateError, toRow } from './events.js'
import { GroupCommit } from './group-commit.js'
import { defaultHostId, type Owner, ownerGoneTest } from './hosts.js'
import { type PrivacyOptions, payloadLimit, protectEvent } from '../base/privacy.js'
import { countRepaired, type OpenCall, ownersAfterParking, planRepair, withReservedSeqs } from './repair.js'
import { SQLITE_LEASE_HELD, SqliteCoordination } from './sqlite-coordination.js'
import type { SqliteDatabase, SqliteDriver, SqliteStatement } from './sqlite-driver.js'
import { journalFault, openJournalDatabase } from './sqlite-schema.js'
import { ensureTurnIndexes, SqliteTurnQueries } from './sqlite-turns.js'
import { planTurnQuery } from './turn-query.js'
import type { JournalEvent, JournalStore, RepairOptions, RepairReport, TurnPage, TurnQuery } from '../../seams/journal.js'
import { SqliteOAuthTokens } from './oauth-tokens.js'

export interface SqliteJournalOptions extends PrivacyOptions {
  /** `FULL` (default) syncs every commit to disk; `NORMAL` may lose the last commits on power loss, never the file. */
  readonly synchronous?: 'FULL' | 'NORMAL'
  /**
   * Appends waiting for a commit share the next transaction and its fsync (default `true`).
   * `false` commits each append on its own: the benchmark's baseline.
   */
  readonly groupCommit?: boolean
  /**
   * Stamped on every event this store writes (default `hostname:pid`), so crash repair can tell a
   * live writer from a dead one. Give each live process its own.
   */
  readonly hostId?: string
  /**
   * The SQLite library: `node` (Node's own `node:sqlite`, Node 22.13+ and 24) or `better-sqlite3`
   * (an optional peer dependency: `npm install better-sqlite3@12`). Default: `node` where this
   * Node.js has it, else `better-sqlite3`; `JOURNAL_UNAVAILABLE` when the one asked for is missing.
   */
  readonly driver?: SqliteDriver
}

/** A SQLite journal store; `driver` says which library runs it. */
export interface SqliteJournal extends JournalStore {
  readonly driver: SqliteDriver
  /** The OAuth records of mounted MCP servers, in this file: `McpToolService({ auth: { store } })`. */
  readonly oauthTokens: OAuthTokenStore
}

/** Turn numbers are never reused, so cached ones stay valid; the cache is only bounded. */
const MAX_CACHED_TURNS = 10_000

const SQL = {
  addTurn: 'INSERT OR IGNORE INTO seam_journal_turns (turn_id) VALUES (?)',
  turnNumber: 'SELECT no FROM seam_journal_turns WHERE turn_id = ?',
  insert: `INSERT OR IGNORE INTO seam_journal_events (turn, seq, kind, call_id, at, host, payload)
    VALUES (?, ?, ?, ?, ?, ?, ?)`,
  /** `insert` for a store holding a lease: refused in the same statement once the lease is fenced. */
  insertLeased: `INSERT OR IGNORE INTO seam_journal_events (turn, seq, kind, call_id, at, host, payload)
    SELECT ?, ?, ?, ?, ?, ?, ? WHERE ${SQLITE_LEASE_HELD}`,
  read: `SELECT e.payload FROM seam_journal_events e JOIN seam_journal_turns t ON t.no = e.turn
    WHERE t.turn_id = ? ORDER BY e.seq`,
  tail: 'SELECT payload FROM (SELECT id, payload FROM seam_journal_events ORDER BY id DESC LIMIT ?) ORDER BY id',
  openCalls: `SELECT t.turn_id AS turnId, c.call_id AS callId, c.host, c.at
    FROM seam_journal_events c JOIN seam_journal_turns t ON t.no = c.turn
    WHERE c.kind = 'tool/call' AND NOT EXISTS (SELECT 1 FROM seam_journal_events r
      WHERE r.turn = c.turn AND r.call_id = c.call_id AND r.kind = 'tool/result')
    ORDER BY c.turn, c.seq`,
  openTurns: `SELECT t.turn_id AS turnId, b.host, b.at FROM seam_journal_events b JOIN seam_journal_turns t ON t.no = b.turn
    WHERE b.kind = 'turn/begin' AND NOT EXISTS (SELECT 1 FROM seam_journal_events e
      WHERE e.turn = b.turn AND e.kind = 'turn/end' AND e.call_id IS NULL)
    ORDER BY b.turn`,
  maxSeq: `SELECT max(e.seq) FROM seam_journal_events e JOIN seam_journal_turns t ON t.no = e.turn
    WHERE t.turn_id = ?`,
} as const

/**
 * The embedded durable journal: one SQLite file (WAL), every append durable before it resolves.
 * Throws `JOURNAL_CORRUPT` naming the file when it is not a journal, `JOURNAL_UNAVAILABLE` when no
 * SQLite library is at hand. Both drivers are synchronous: a commit holds the event loop for its
 * fsync, which group commit shares among all waiting appends.
 */
export function sqliteJournal(path: string, options: SqliteJournalOptions = {}): SqliteJournal {
  return new SqliteJournalStore(resolve(path), options)
}

class SqliteJournalStore implements SqliteJournal {
  readonly kind = 'sqlite'
  readonly location: string
  readonly driver: SqliteDriver
  readonly #db: SqliteDatabase
  readonly #maxBytes: number
  readonly #host: string
  readonly #statements: { [name in keyof typeof SQL]: SqliteStatement }
  readonly #turnNumbers = new Map<string, number>()
  /** Inserts a batch in one transaction; per row, the duplicate error or `undefined`. */
  readonly #commit: (rows: readonly EventRow[]) => (Error | undefined)[]
  readonly #group: GroupCommit<EventRow> | undefined
  readonly coordination: SqliteCoordination
  readonly oauthTokens: OAuthTokenStore
  readonly #turnQueries: SqliteTurnQueries
  #closed = false

  constructor(path: string, options: SqliteJournalOptions) {
    this.location = path
    this.#db = openJournalDatabase(path, options.synchronous ?? 'FULL', options.driver)
    this.driver = this.#db.driver
    this.#maxBytes = payloadLimit(options)
    this.#host = options.hostId ?? defaultHostId()
    const prepare = (sql: string, pluck = false) => this.#db.prepare(sql, { pluck })
    this.#statements = {
      addTurn: prepare(SQL.addTurn),
      turnNumber: prepare(SQL.turnNumber, true),
      insert: prepare(SQL.insert),
      insertLeased: prepare(SQL.insertLeased),
      read: prepare(SQL.read, true),
      tail: prepare(SQL.tail, true),
      openCalls: prepare(SQL.openCalls),
      openTurns: prepare(SQL.openTurns),
      maxSeq: prepare(SQL.maxSeq, true),
    }
    const commit = this.#db.transaction((rows: readonly EventRow[]) =>
      // The first insert checks the lease: it holds the write lock from there to the commit, so
      // the lease cannot be fenced before the others are in.
      rows.map((row, index) => (this.#insert(row, index === 0) ? undefined : duplicateError(row, path))),
    )
    this.#commit = (rows) => {
      try {
        return commit(rows)
      } catch (error) {
        // Numbers of turns added in the rolled-back transaction no longer exist.
        this.#turnNumbers.clear()
        throw journalFault(error, path)
      }
    }
    this.#group = options.groupCommit === false ? undefined : new GroupCommit(this.#commit)
    this.coordination = new SqliteCoordination(this.#db, this.#host, path, () => this.#assertOpen())
    this.oauthTokens = new SqliteOAuthTokens(this.#db, () => this.#assertOpen())
    ensureTurnIndexes(this.#db)
    this.#turnQueries = new SqliteTurnQueries(this.#db)
  }

  append(event: JournalEvent): Promise<void> {
    try {
      if (this.#closed) throw closedError(this.location)
      checkEvent(event)
      const row = toRow(protectEvent(event, this.#maxBytes), this.#host)
      if (this.#group !== undefined) return this.#group.push(row)
      const [refused] = this.#commit([row])
      return refused === undefined ? Promise.resolve() : Promise.reject(refused)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  onCommit(listener: (events: number) => void): () => void {
    const listeners = this.#group?.listeners
    listeners?.add(listener)
    return () => listeners?.delete(listener)
  }

  async read(turnId: string): Promise<JournalEvent[]> {
    return this.#payloads(() => this.#statements.read.all(turnId))
  }

  async tail(limit: number): Promise<JournalEvent[]> {
    return limit > 0 ? this.#payloads(() => this.#statements.tail.all(Math.floor(limit))) : []
  }

  /** See `JournalStore.turns`. */
  async turns(query?: TurnQuery): Promise<TurnPage> {
    const plan = planTurnQuery(query)
    this.#assertOpen()
    try {
      return this.#turnQueries.page(plan)
    } catch (error) {
      throw journalFault(error, this.location)
    }
  }

  /**
   * See `JournalStore.repair`. One immediate transaction: what it reads cannot change before its
   * events are in, so another process repairing at the same time finds them written.
   */
  async repair(options: RepairOptions = {}): Promise<RepairReport> {
    this.#assertOpen()
    // Appends already waiting are part of the state being repaired.
    this.#group?.flush()
    const { openCalls, openTurns, maxSeq } = this.#statements
    const coordination = this.coordination
    const repair = this.#db.transaction(() => {
      // First, under the write lock: a fenced host's repair is refused, and every host past its
      // lease is fenced before its open calls are read, so none of them lands another write.
      coordination.fenceExpired(Date.now())
      const gone = ownerGoneTest(this.#host, options.hosts, coordination.beats())
      const open = openCalls.all() as (OpenCall & Owner)[]
      const turns = (openTurns.all() as (Owner & { turnId: string })[]).filter(gone).map((turn) => turn.turnId)
      const parked = coordination.roundsOf(new Set([...open.map((call) => call.turnId), ...turns]))
      const calls = ownersAfterParking(open, parked)
        .filter(gone)
        .map(({ turnId, callId, seq }) => ({ turnId, callId, seq }))
      const seqs = new Map<string, number>()
      for (const turnId of [...calls.map((call) => call.turnId), ...turns]) {
        if (!seqs.has(turnId)) seqs.set(turnId, (maxSeq.get(turnId) as number | null) ?? 0)
      }
      const planned = planRepair({ openCalls: calls, openTurns: turns, maxSeq: withReservedSeqs(seqs, parked), at: Date.now() })
      // fenceExpired checked this store's lease under the transaction's write lock.
      return countRepaired(planned.filter((event) => this.#insert(toRow(event, this.#host), false)))
    }, 'immediate')
    try {
      return repair()
    } catch (error) {
      this.#turnNumbers.clear()
      throw journalFault(error, this.location)
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // Appends already accepted settle before the file closes.
    this.#group?.flush()
    this.#db.close()
  }

  /**
   * Inside a transaction: `false` when a uniqueness rule refused the row. With `checkLease`, while
   * this store holds a lease, the insert checks it in the same statement and throws `HOST_FENCED`
   * once it is fenced; the transaction's later inserts need not (it holds the write lock).
   */
  #insert(row: EventRow, checkLease: boolean): boolean {
    const turn = this.#turnNumber(row.turnId)
    const coordination = this.coordination
    if (!checkLease || !coordination.leased()) return this.#statements.insert.run(turn, row.seq, row.kind, row.callId, row.at, row.host, row.payload).changes === 1
    const inserted = this.#statements.insertLeased.run(turn, row.seq, row.kind, row.callId, row.at, row.host, row.payload, coordination.host, coordination.epoch!).changes === 1
    if (!inserted) coordination.refusedUnlessHeld()
    return inserted
  }

  /** The turn's number, added on its first event (another connection may have added it first). */
  #turnNumber(turnId: string): number {
    let turn = this.#turnNumbers.get(turnId)
    if (turn === undefined) {
      const added = this.#statements.addTurn.run(turnId)
      turn = added.changes === 1 ? Number(added.lastInsertRowid) : (this.#statements.turnNumber.get(turnId) as number)
      if (this.#turnNumbers.size >= MAX_CACHED_TURNS) this.#turnNumbers.clear()
      this.#turnNumbers.set(turnId, turn)
    }
    return turn
  }

  #payloads(query: () => unknown[]): JournalEvent[] {
    this.#assertOpen()
    try {
      return (query() as string[]).map((payload) => JSON.parse(payload) as JournalEvent)
    } catch (error) {
      throw journalFault(error, this.location)
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw closedError(this.location)
  }
}

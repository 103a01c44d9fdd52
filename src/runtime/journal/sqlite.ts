import { resolve } from 'node:path'
import type Database from 'better-sqlite3'
import { type EventRow, checkEvent, closedError, duplicateError, toRow } from './events.js'
import { GroupCommit } from './group-commit.js'
import { DEFAULT_MAX_PAYLOAD_BYTES, type PrivacyOptions, protectEvent } from './privacy.js'
import { countRepaired, type OpenCall, planRepair } from './repair.js'
import { journalFault, openJournalDatabase } from './sqlite-schema.js'
import type { JournalEvent, JournalStore, RepairReport } from './types.js'

export interface SqliteJournalOptions extends PrivacyOptions {
  /** `FULL` (default) syncs every commit to disk; `NORMAL` may lose the last commits on power loss, never the file. */
  readonly synchronous?: 'FULL' | 'NORMAL'
  /**
   * Appends waiting for a commit share the next transaction and its fsync (default `true`).
   * `false` commits each append on its own: the benchmark's baseline.
   */
  readonly groupCommit?: boolean
}

const INSERT = `INSERT OR IGNORE INTO seam_journal_events (turn_id, seq, kind, call_id, at, host, payload)
  VALUES (@turnId, @seq, @kind, @callId, @at, @host, @payload)`
const READ = 'SELECT payload FROM seam_journal_events WHERE turn_id = ? ORDER BY seq'
const TAIL = `SELECT payload FROM (SELECT id, payload FROM seam_journal_events ORDER BY id DESC LIMIT ?) ORDER BY id`
const OPEN_CALLS = `SELECT c.turn_id AS turnId, c.call_id AS callId FROM seam_journal_events c
  WHERE c.kind = 'tool/call' AND NOT EXISTS (SELECT 1 FROM seam_journal_events r
    WHERE r.turn_id = c.turn_id AND r.call_id = c.call_id AND r.kind = 'tool/result')
  ORDER BY c.turn_id, c.seq`
const OPEN_TURNS = `SELECT b.turn_id FROM seam_journal_events b
  WHERE b.kind = 'turn/begin' AND NOT EXISTS (SELECT 1 FROM seam_journal_events e
    WHERE e.turn_id = b.turn_id AND e.kind = 'turn/end' AND e.call_id IS NULL)
  ORDER BY b.turn_id`
const MAX_SEQ = 'SELECT max(seq) FROM seam_journal_events WHERE turn_id = ?'

/**
 * The embedded durable journal: one SQLite file (WAL), every append durable before it resolves.
 * Throws `JOURNAL_CORRUPT` naming the file when it is not a journal. better-sqlite3 is synchronous:
 * a commit holds the event loop for its fsync, which group commit shares among all waiting appends.
 */
export function sqliteJournal(path: string, options: SqliteJournalOptions = {}): JournalStore {
  return new SqliteJournalStore(resolve(path), options)
}

class SqliteJournalStore implements JournalStore {
  readonly kind = 'sqlite'
  readonly location: string
  readonly #db: Database.Database
  readonly #maxBytes: number
  readonly #insert: Database.Statement<EventRow>
  readonly #read: Database.Statement<[string]>
  readonly #tail: Database.Statement<[number]>
  /** Inserts a batch in one transaction; per row, the duplicate error or `undefined`. */
  readonly #commit: (rows: readonly EventRow[]) => (Error | undefined)[]
  readonly #group: GroupCommit<EventRow> | undefined
  #closed = false

  constructor(path: string, options: SqliteJournalOptions) {
    this.location = path
    this.#db = openJournalDatabase(path, options.synchronous ?? 'FULL')
    this.#maxBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
    this.#insert = this.#db.prepare<EventRow>(INSERT)
    this.#read = this.#db.prepare<[string]>(READ).pluck()
    this.#tail = this.#db.prepare<[number]>(TAIL).pluck()
    const commit = this.#db.transaction((rows: readonly EventRow[]) =>
      rows.map((row) => (this.#insert.run(row).changes === 1 ? undefined : duplicateError(row, path))),
    )
    this.#commit = (rows) => {
      try {
        return commit(rows)
      } catch (error) {
        throw journalFault(error, path)
      }
    }
    this.#group = options.groupCommit === false ? undefined : new GroupCommit(this.#commit)
  }

  append(event: JournalEvent): Promise<void> {
    try {
      if (this.#closed) throw closedError(this.location)
      checkEvent(event)
      const row = toRow(protectEvent(event, this.#maxBytes))
      if (this.#group !== undefined) return this.#group.push(row)
      const [refused] = this.#commit([row])
      return refused === undefined ? Promise.resolve() : Promise.reject(refused)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  async read(turnId: string): Promise<JournalEvent[]> {
    return this.#payloads(() => this.#read.all(turnId))
  }

  async tail(limit: number): Promise<JournalEvent[]> {
    return limit > 0 ? this.#payloads(() => this.#tail.all(Math.floor(limit))) : []
  }

  async repair(): Promise<RepairReport> {
    this.#assertOpen()
    // Appends already waiting are part of the state being repaired.
    this.#group?.flush()
    const repair = this.#db.transaction(() => {
      const openCalls = this.#db.prepare(OPEN_CALLS).all() as OpenCall[]
      const openTurns = this.#db.prepare(OPEN_TURNS).pluck().all() as string[]
      const maxSeq = new Map<string, number>()
      const seqOf = this.#db.prepare(MAX_SEQ).pluck()
      for (const turnId of [...openCalls.map((call) => call.turnId), ...openTurns]) {
        if (!maxSeq.has(turnId)) maxSeq.set(turnId, (seqOf.get(turnId) as number | null) ?? 0)
      }
      const planned = planRepair({ openCalls, openTurns, maxSeq, at: Date.now() })
      return countRepaired(planned.filter((event) => this.#insert.run(toRow(event)).changes === 1))
    })
    try {
      return repair.immediate()
    } catch (error) {
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

  #payloads(query: () => unknown[]): JournalEvent[] {
    this.#assertOpen()
    try {
      const rows = query() as string[]
      return rows.map((payload) => JSON.parse(payload) as JournalEvent)
    } catch (error) {
      throw journalFault(error, this.location)
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw closedError(this.location)
  }
}

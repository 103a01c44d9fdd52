import type {
  Claimed,
  HostBeat,
  JournalCoordination,
  KeyClaim,
  KeyHolder,
  ParkedCall,
  ParkedDecision,
  ParkedQuery,
  ParkedSettlement,
  GrantQuery,
  SessionGrant,
  StoredGrant,
  StoredResult,
  StoredTask,
  TaskChange,
  TaskExpect,
  TaskStatus,
} from '../../seams/coordination.js'
import { storedRound, taskExpect } from '../../seams/coordination.js'
import { duplicateError, taskDuplicateError } from './events.js'
import { fencedError, newEpoch } from './hosts.js'
import type { SqliteDatabase, SqliteStatement, SqliteValue } from './sqlite-driver.js'
import { journalFault } from './sqlite-schema.js'

/** Whether the store's lease is still held: its epoch registered and not fenced. Two parameters: host, epoch. */
export const SQLITE_LEASE_HELD = 'EXISTS (SELECT 1 FROM seam_journal_hosts WHERE host = ? AND epoch = ? AND fenced_at IS NULL)'

const SQL = {
  park: `INSERT OR IGNORE INTO seam_journal_parked (token, turn_id, call_id, round, session, subject_id, asked_at, call)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  byToken: 'SELECT call, decision, settled FROM seam_journal_parked WHERE token = ?',
  decide: 'UPDATE seam_journal_parked SET decision = ? WHERE token = ? AND decision IS NULL AND settled IS NULL AND asked_at >= ?',
  expire: 'UPDATE seam_journal_parked SET settled = ? WHERE token = ? AND settled IS NULL AND decision IS NULL AND asked_at < ?',
  settle: 'UPDATE seam_journal_parked SET settled = ? WHERE token = ? AND settled IS NULL',
  claimKey: 'INSERT OR IGNORE INTO seam_journal_keys (key, turn_id, call_id, host, at) VALUES (?, ?, ?, ?, ?)',
  readKey: 'SELECT key, turn_id AS turnId, call_id AS callId, host, at, result FROM seam_journal_keys WHERE key = ?',
  completeKey: `UPDATE seam_journal_keys SET result = ?
    WHERE key = ? AND turn_id = ? AND call_id = ? AND host = ? AND result IS NULL`,
  releaseKey: 'DELETE FROM seam_journal_keys WHERE key = ? AND turn_id = ? AND call_id = ? AND host = ? AND result IS NULL',
  grant: `INSERT OR IGNORE INTO seam_journal_grants (session, subject_id, source, fingerprint, at) VALUES (?, ?, ?, ?, ?)`,
  hasGrant: 'SELECT 1 FROM seam_journal_grants WHERE session = ? AND subject_id = ? AND source = ? AND fingerprint = ?',
  // A null parameter matches every row: one statement for each combination a query may give.
  grants: `SELECT session, subject_id AS subjectId, source, fingerprint, at FROM seam_journal_grants
    WHERE (? IS NULL OR session = ?) AND (? IS NULL OR subject_id = ?) AND (? IS NULL OR source = ?) AND (? IS NULL OR fingerprint = ?)
    ORDER BY at, session, subject_id, source, fingerprint`,
  revokeGrants: `DELETE FROM seam_journal_grants
    WHERE session = ? AND (? IS NULL OR subject_id = ?) AND (? IS NULL OR source = ?) AND (? IS NULL OR fingerprint = ?)`,
  heartbeat: `INSERT INTO seam_journal_hosts (host, beat_at, lease_ms) VALUES (?, ?, ?)
    ON CONFLICT (host) DO UPDATE SET beat_at = excluded.beat_at, lease_ms = excluded.lease_ms WHERE fenced_at IS NULL`,
  retire: 'DELETE FROM seam_journal_hosts WHERE host = ?',
  beats: 'SELECT host, beat_at AS beatAt, lease_ms AS leaseMs, fenced_at IS NOT NULL AS fenced FROM seam_journal_hosts',
  register: `INSERT INTO seam_journal_hosts (host, beat_at, lease_ms, epoch, fenced_at) VALUES (?, ?, ?, ?, NULL)
    ON CONFLICT (host) DO UPDATE SET beat_at = excluded.beat_at, lease_ms = excluded.lease_ms, epoch = excluded.epoch, fenced_at = NULL`,
  held: 'SELECT 1 FROM seam_journal_hosts WHERE host = ? AND epoch = ? AND fenced_at IS NULL',
  fence: 'UPDATE seam_journal_hosts SET fenced_at = ? WHERE fenced_at IS NULL AND beat_at + lease_ms < ? AND host <> ?',
  createTask: `INSERT OR IGNORE INTO seam_journal_tasks (task_id, session, subject_id, status, created_at, updated_at, ttl_ms, state)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  readTask: `SELECT task_id AS taskId, session, subject_id AS subjectId, status, created_at AS createdAt, updated_at AS updatedAt,
    ttl_ms AS ttlMs, state FROM seam_journal_tasks WHERE task_id = ?`,
  updateTask: `UPDATE seam_journal_tasks SET status = ?, state = ?, updated_at = ?
    WHERE task_id = ? AND status NOT IN ('completed', 'failed', 'cancelled') AND (? IS NULL OR status = ?) AND (? IS NULL OR updated_at = ?)`,
} as const

/**
 * The writes of a store that holds a lease: each the plain write, refused in its own statement
 * unless the lease is still held (two more parameters at the end: host, epoch).
 */
const FENCED = {
  park: `INSERT OR IGNORE INTO seam_journal_parked (token, turn_id, call_id, round, session, subject_id, asked_at, call)
    SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE ${SQLITE_LEASE_HELD}`,
  decide: `${SQL.decide} AND ${SQLITE_LEASE_HELD}`,
  expire: `${SQL.expire} AND ${SQLITE_LEASE_HELD}`,
  settle: `${SQL.settle} AND ${SQLITE_LEASE_HELD}`,
  claimKey: `INSERT OR IGNORE INTO seam_journal_keys (key, turn_id, call_id, host, at) SELECT ?, ?, ?, ?, ? WHERE ${SQLITE_LEASE_HELD}`,
  completeKey: `${SQL.completeKey} AND ${SQLITE_LEASE_HELD}`,
  releaseKey: `${SQL.releaseKey} AND ${SQLITE_LEASE_HELD}`,
  grant: `INSERT OR IGNORE INTO seam_journal_grants (session, subject_id, source, fingerprint, at) SELECT ?, ?, ?, ?, ? WHERE ${SQLITE_LEASE_HELD}`,
  revokeGrants: `${SQL.revokeGrants} AND ${SQLITE_LEASE_HELD}`,
  heartbeat: 'UPDATE seam_journal_hosts SET beat_at = ?, lease_ms = ? WHERE host = ? AND epoch = ? AND fenced_at IS NULL',
  retire: `DELETE FROM seam_journal_hosts WHERE host = ? AND ${SQLITE_LEASE_HELD}`,
} as const

type Write = keyof typeof FENCED

interface ParkedRow {
  readonly call: string
  readonly decision: string | null
  readonly settled: string | null
}

/**
 * The coordination claims of a SQLite journal. Each claim is one statement, so SQLite's own write
 * lock decides it: of several processes on one file, exactly one `INSERT OR IGNORE` inserts and
 * exactly one `UPDATE … WHERE … IS NULL` changes the row.
 */
export class SqliteCoordination implements JournalCoordination {
  readonly #db: SqliteDatabase
  readonly #location: string
  readonly #check: () => void
  readonly #statements: { [name in keyof typeof SQL]: SqliteStatement }
  readonly #fencedStatements: { [name in Write]: SqliteStatement }
  /** The lease this store registered on its first heartbeat; until then its writes are not fenced. */
  #epoch: number | undefined
  #fenced = false
  readonly host: string

  constructor(db: SqliteDatabase, host: string, location: string, check: () => void) {
    this.host = host
    this.#db = db
    this.#location = location
    this.#check = check
    this.#statements = Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)])) as never
    this.#fencedStatements = Object.fromEntries(Object.entries(FENCED).map(([name, sql]) => [name, db.prepare(sql)])) as never
  }

  /** The lease epoch this store's writes are checked against, once it holds one. */
  get epoch(): number | undefined {
    return this.#epoch
  }

  /**
   * Throws `HOST_FENCED` once this store is known fenced; `false` while it holds no lease (its
   * writes are then not fenced), `true` while it holds one.
   */
  leased(): boolean {
    if (this.#fenced) throw fencedError(this.host, this.#location)
    return this.#epoch !== undefined
  }

  /**
   * After a fenced write changed nothing: whether the lease is gone (then marks the store fenced and
   * throws). A write the lease allowed that changed nothing (a duplicate) returns.
   */
  refusedUnlessHeld(what?: string): void {
    if (this.#epoch === undefined || this.#statements.held.get(this.host, this.#epoch) !== undefined) return
    this.#fenced = true
    throw fencedError(this.host, this.#location, what)
  }

  /**
   * Inside crash repair's transaction, before it reads what is open: refuses a fenced store's
   * repair, then fences every other host past its lease at `now`, so none of them can write again.
   */
  fenceExpired(now: number): void {
    if (this.leased()) this.refusedUnlessHeld('repair')
    this.#statements.fence.run(now, now, this.host)
  }

  async park(call: ParkedCall): Promise<void> {
    const { decision: _d, settled: _s, ...stored } = call
    const inserted = this.#write('park', call.token, call.turnId, call.callId, call.round, call.session, call.subjectId, call.askedAt, JSON.stringify(stored))
    if (inserted === 0) {
      throw duplicateError({ turnId: call.turnId, seq: call.decidedSeq, kind: 'approval/asked', callId: call.callId }, this.#location)
    }
  }

  async parked(query: ParkedQuery = {}): Promise<ParkedCall[]> {
    const where: string[] = []
    const values: SqliteValue[] = []
    const add = (column: string, op: string, value: SqliteValue | undefined) => {
      if (value === undefined) return
      where.push(`${column} ${op} ?`)
      values.push(value)
    }
    add('token', '=', query.token)
    add('turn_id', '=', query.turnId)
    add('call_id', '=', query.callId)
    add('session', '=', query.session)
    add('subject_id', '=', query.subjectId)
    add('asked_at', '<', query.askedBefore)
    if (query.settled !== true) where.push('settled IS NULL')
    const sql = `SELECT call, decision, settled FROM seam_journal_parked ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY asked_at, rowid`
    return this.#run(() => (this.#db.prepare(sql).all(...values) as ParkedRow[]).map(parkedOf))
  }

  async decide(token: string, decision: ParkedDecision, askedAfter = Number.MIN_SAFE_INTEGER): Promise<Claimed | undefined> {
    return this.#claim(token, () => this.#write('decide', JSON.stringify(decision), token, askedAfter) === 1)
  }

  async expire(token: string, expiry: { readonly host: string; readonly at: number }, askedBefore: number): Promise<Claimed | undefined> {
    const settled: ParkedSettlement = { kind: 'expire', host: expiry.host, at: expiry.at }
    return this.#claim(token, () => this.#write('expire', JSON.stringify(settled), token, askedBefore) === 1)
  }

  async settle(token: string, settlement: ParkedSettlement): Promise<Claimed | undefined> {
    return this.#claim(token, () => this.#write('settle', JSON.stringify(settlement), token) === 1)
  }

  async claimKey(key: string, holder: KeyHolder): Promise<KeyClaim> {
    this.#write('claimKey', key, holder.turnId, holder.callId, holder.host, Date.now())
    const claim = await this.readKey(key)
    // Released between the insert and the read: the next claim decides.
    return claim ?? this.claimKey(key, holder)
  }

  async readKey(key: string): Promise<KeyClaim | undefined> {
    const row = this.#run(() => this.#statements.readKey.get(key)) as (Omit<KeyClaim, 'result'> & { result: string | null }) | undefined
    if (row === undefined) return undefined
    const { result, ...claim } = row
    return result === null ? claim : { ...claim, result: JSON.parse(result) as StoredResult }
  }

  async completeKey(key: string, holder: KeyHolder, result: StoredResult): Promise<void> {
    this.#write('completeKey', JSON.stringify(result), key, holder.turnId, holder.callId, holder.host)
  }

  async releaseKey(key: string, holder: KeyHolder): Promise<void> {
    this.#write('releaseKey', key, holder.turnId, holder.callId, holder.host)
  }

  async grant(grant: SessionGrant): Promise<void> {
    this.#write('grant', grant.session, grant.subjectId, grant.source, grant.fingerprint, Date.now())
  }

  async hasGrant(grant: SessionGrant): Promise<boolean> {
    return this.#run(() => this.#statements.hasGrant.get(grant.session, grant.subjectId, grant.source, grant.fingerprint)) !== undefined
  }

  async grants(query: GrantQuery = {}): Promise<StoredGrant[]> {
    return this.#run(() => this.#statements.grants.all(...grantParams(query)) as StoredGrant[])
  }

  /** A revoke that matched nothing is not an error; a fenced store's revoke is refused all the same. */
  async revokeGrants(query: GrantQuery & { readonly session: string }): Promise<number> {
    return this.#write('revokeGrants', ...grantParams(query).slice(1))
  }

  /**
   * This store's own first beat registers its lease under a new epoch; each later one renews it only
   * while it is held, and rejects with `HOST_FENCED` once another host fenced it. Another host's
   * beat (tests, tools) is written as given, without a lease.
   */
  async heartbeat(host: string, leaseMs: number): Promise<void> {
    if (host !== this.host) {
      const { changes } = this.#run(() => this.#statements.heartbeat.run(host, Date.now(), leaseMs))
      if (changes === 0) throw fencedError(host, this.#location, 'heartbeat')
      return
    }
    if (this.#epoch === undefined) {
      const epoch = newEpoch()
      this.#run(() => this.#statements.register.run(host, Date.now(), leaseMs, epoch))
      this.#epoch = epoch
      return
    }
    this.#write('heartbeat', Date.now(), leaseMs)
  }

  /** This store's own lease is retired only while it holds it: a fenced host's row stays, fenced. */
  async retire(host: string): Promise<void> {
    if (host === this.host && this.#epoch !== undefined) return void this.#write('retire', host)
    this.#run(() => this.#statements.retire.run(host))
  }

  /** Inside crash repair's transaction: every round of the given turns, and every heartbeat. */
  roundsOf(turnIds: ReadonlySet<string>): ParkedCall[] {
    if (turnIds.size === 0) return []
    const rows = this.#db
      .prepare(`SELECT call, decision, settled FROM seam_journal_parked WHERE turn_id IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify([...turnIds])) as ParkedRow[]
    return rows.map(parkedOf)
  }

  beats(): HostBeat[] {
    const rows = this.#statements.beats.all() as { host: string; beatAt: number; leaseMs: number; fenced: number }[]
    return rows.map((row) => ({ host: row.host, beatAt: row.beatAt, leaseMs: row.leaseMs, fenced: row.fenced === 1 }))
  }

  #claim(token: string, write: () => boolean): Claimed | undefined {
    const won = this.#run(write)
    const row = this.#run(() => this.#statements.byToken.get(token)) as ParkedRow | undefined
    return row === undefined ? undefined : { won, call: parkedOf(row) }
  }

  /**
   * One write, with the lease check in its own statement while this store holds a lease: a write
   * that changed nothing is classified (fenced, or a duplicate the caller handles). Its changes.
   */
  #write(name: Write, ...values: SqliteValue[]): number {
    return this.#run(() => {
      if (!this.leased()) return this.#statements[name as keyof typeof SQL].run(...values).changes
      const { changes } = this.#fencedStatements[name].run(...values, this.host, this.#epoch!)
      if (changes === 0) this.refusedUnlessHeld()
      return changes
    })
  }

  async createTask(task: StoredTask): Promise<void> {
    const { changes } = this.#run(() =>
      this.#statements.createTask.run(task.taskId, task.session, task.subjectId, task.status, task.createdAt, task.updatedAt, task.ttlMs, JSON.stringify(task.state)),
    )
    if (changes === 0) throw taskDuplicateError(task.taskId, this.#location)
  }

  async readTask(taskId: string): Promise<StoredTask | undefined> {
    const row = this.#run(() => this.#statements.readTask.get(taskId)) as (Omit<StoredTask, 'state'> & { state: string }) | undefined
    return row === undefined ? undefined : { ...row, state: JSON.parse(row.state) }
  }

  async updateTask(taskId: string, change: TaskChange, expect?: TaskStatus | TaskExpect): Promise<boolean> {
    const { status = null, updatedAt = null } = taskExpect(expect)
    const { changes } = this.#run(() =>
      this.#statements.updateTask.run(change.status, JSON.stringify(change.state), change.at, taskId, status, status, updatedAt, updatedAt),
    )
    return changes > 0
  }

  #run<T>(operation: () => T): T {
    this.#check()
    try {
      return operation()
    } catch (error) {
      throw journalFault(error, this.#location)
    }
  }
}

function parkedOf(row: ParkedRow): ParkedCall {
  return storedRound(
    JSON.parse(row.call) as ParkedCall,
    row.decision === null ? undefined : (JSON.parse(row.decision) as ParkedDecision),
    row.settled === null ? undefined : (JSON.parse(row.settled) as ParkedSettlement),
  )
}

/** Each filter twice, for its `(? IS NULL OR column = ?)` (positional: both drivers bind these alike). */
function grantParams(query: GrantQuery): (string | null)[] {
  return [query.session, query.subjectId, query.source, query.fingerprint].flatMap((value) => [value ?? null, value ?? null])
}

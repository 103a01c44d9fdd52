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
} from '../../seams/coordination.js'
import { storedRound } from '../../seams/coordination.js'
import { duplicateError } from './events.js'
import type { SqliteDatabase, SqliteStatement, SqliteValue } from './sqlite-driver.js'
import { journalFault } from './sqlite-schema.js'

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
    ON CONFLICT (host) DO UPDATE SET beat_at = excluded.beat_at, lease_ms = excluded.lease_ms`,
  retire: 'DELETE FROM seam_journal_hosts WHERE host = ?',
  beats: 'SELECT host, beat_at AS beatAt, lease_ms AS leaseMs FROM seam_journal_hosts',
} as const

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
  readonly host: string

  constructor(db: SqliteDatabase, host: string, location: string, check: () => void) {
    this.host = host
    this.#db = db
    this.#location = location
    this.#check = check
    this.#statements = Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)])) as never
  }

  async park(call: ParkedCall): Promise<void> {
    const { decision: _d, settled: _s, ...stored } = call
    const inserted = this.#run(() =>
      this.#statements.park.run(call.token, call.turnId, call.callId, call.round, call.session, call.subjectId, call.askedAt, JSON.stringify(stored)),
    )
    if (inserted.changes === 0) {
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
    return this.#claim(token, () => this.#statements.decide.run(JSON.stringify(decision), token, askedAfter).changes === 1)
  }

  async expire(token: string, expiry: { readonly host: string; readonly at: number }, askedBefore: number): Promise<Claimed | undefined> {
    const settled: ParkedSettlement = { kind: 'expire', host: expiry.host, at: expiry.at }
    return this.#claim(token, () => this.#statements.expire.run(JSON.stringify(settled), token, askedBefore).changes === 1)
  }

  async settle(token: string, settlement: ParkedSettlement): Promise<Claimed | undefined> {
    return this.#claim(token, () => this.#statements.settle.run(JSON.stringify(settlement), token).changes === 1)
  }

  async claimKey(key: string, holder: KeyHolder): Promise<KeyClaim> {
    this.#run(() => this.#statements.claimKey.run(key, holder.turnId, holder.callId, holder.host, Date.now()))
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
    this.#run(() => this.#statements.completeKey.run(JSON.stringify(result), key, holder.turnId, holder.callId, holder.host))
  }

  async releaseKey(key: string, holder: KeyHolder): Promise<void> {
    this.#run(() => this.#statements.releaseKey.run(key, holder.turnId, holder.callId, holder.host))
  }

  async grant(grant: SessionGrant): Promise<void> {
    this.#run(() => this.#statements.grant.run(grant.session, grant.subjectId, grant.source, grant.fingerprint, Date.now()))
  }

  async hasGrant(grant: SessionGrant): Promise<boolean> {
    return this.#run(() => this.#statements.hasGrant.get(grant.session, grant.subjectId, grant.source, grant.fingerprint)) !== undefined
  }

  async grants(query: GrantQuery = {}): Promise<StoredGrant[]> {
    return this.#run(() => this.#statements.grants.all(...grantParams(query)) as StoredGrant[])
  }

  async revokeGrants(query: GrantQuery & { readonly session: string }): Promise<number> {
    return this.#run(() => this.#statements.revokeGrants.run(...grantParams(query).slice(1)).changes)
  }

  async heartbeat(host: string, leaseMs: number): Promise<void> {
    this.#run(() => this.#statements.heartbeat.run(host, Date.now(), leaseMs))
  }

  async retire(host: string): Promise<void> {
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
    return this.#statements.beats.all() as HostBeat[]
  }

  #claim(token: string, write: () => boolean): Claimed | undefined {
    const won = this.#run(write)
    const row = this.#run(() => this.#statements.byToken.get(token)) as ParkedRow | undefined
    return row === undefined ? undefined : { won, call: parkedOf(row) }
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

import type pg from 'pg'
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

/** The database's clock in epoch milliseconds: hosts on several machines compare leases on one clock. */
const DB_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint'

function statements(schema: string) {
  const parked = `${schema}.seam_journal_parked`
  const keys = `${schema}.seam_journal_keys`
  const grants = `${schema}.seam_journal_grants`
  const hosts = `${schema}.seam_journal_hosts`
  return {
    parkedTable: parked,
    park: `INSERT INTO ${parked} (token, turn_id, call_id, round, session, subject_id, asked_at, call)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
    decide: `UPDATE ${parked} SET decision = $2 WHERE token = $1 AND decision IS NULL AND settled IS NULL AND asked_at >= $3 RETURNING token`,
    expire: `UPDATE ${parked} SET settled = $2 WHERE token = $1 AND settled IS NULL AND decision IS NULL AND asked_at < $3 RETURNING token`,
    settle: `UPDATE ${parked} SET settled = $2 WHERE token = $1 AND settled IS NULL RETURNING token`,
    byToken: `SELECT call, decision, settled FROM ${parked} WHERE token = $1`,
    roundsOf: `SELECT call, decision, settled FROM ${parked} WHERE turn_id = ANY($1)`,
    claimKey: `INSERT INTO ${keys} (key, turn_id, call_id, host, at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    readKey: `SELECT key, turn_id AS "turnId", call_id AS "callId", host, at, result FROM ${keys} WHERE key = $1`,
    completeKey: `UPDATE ${keys} SET result = $5 WHERE key = $1 AND turn_id = $2 AND call_id = $3 AND host = $4 AND result IS NULL`,
    releaseKey: `DELETE FROM ${keys} WHERE key = $1 AND turn_id = $2 AND call_id = $3 AND host = $4 AND result IS NULL`,
    grant: `INSERT INTO ${grants} (session, subject_id, source, fingerprint, at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    hasGrant: `SELECT 1 FROM ${grants} WHERE session = $1 AND subject_id = $2 AND source = $3 AND fingerprint = $4`,
    // A null parameter matches every row: one statement for each combination a query may give.
    grants: `SELECT session, subject_id AS "subjectId", source, fingerprint, at FROM ${grants}
      WHERE ($1::text IS NULL OR session = $1) AND ($2::text IS NULL OR subject_id = $2) AND ($3::text IS NULL OR source = $3) AND ($4::text IS NULL OR fingerprint = $4)
      ORDER BY at, session, subject_id, source, fingerprint`,
    revokeGrants: `DELETE FROM ${grants}
      WHERE session = $1 AND ($2::text IS NULL OR subject_id = $2) AND ($3::text IS NULL OR source = $3) AND ($4::text IS NULL OR fingerprint = $4)`,
    heartbeat: `INSERT INTO ${hosts} (host, beat_at, lease_ms) VALUES ($1, ${DB_NOW}, $2)
      ON CONFLICT (host) DO UPDATE SET beat_at = excluded.beat_at, lease_ms = excluded.lease_ms`,
    retire: `DELETE FROM ${hosts} WHERE host = $1`,
    beats: `SELECT host, beat_at AS "beatAt", lease_ms AS "leaseMs", ${DB_NOW} AS now FROM ${hosts}`,
  }
}

interface ParkedRow {
  readonly call: ParkedCall
  readonly decision: ParkedDecision | null
  readonly settled: ParkedSettlement | null
}

/**
 * The coordination claims of a PostgreSQL journal, shared by hosts on several machines. Each claim
 * is one statement (`INSERT … ON CONFLICT DO NOTHING`, `UPDATE … WHERE … IS NULL RETURNING`): the
 * row lock PostgreSQL takes for it lets exactly one concurrent writer change the row.
 */
export class PostgresCoordination implements JournalCoordination {
  readonly #pool: pg.Pool
  readonly #location: string
  readonly #run: <T>(operation: () => Promise<T>) => Promise<T>
  readonly #sql: ReturnType<typeof statements>
  readonly host: string

  /** `run` waits for the schema and refuses after close (the store's own gate). */
  constructor(pool: pg.Pool, host: string, schema: string, location: string, run: <T>(operation: () => Promise<T>) => Promise<T>) {
    this.host = host
    this.#pool = pool
    this.#location = location
    this.#run = run
    this.#sql = statements(schema)
  }

  park(call: ParkedCall): Promise<void> {
    return this.#run(async () => {
      const { decision: _d, settled: _s, ...stored } = call
      const values = [call.token, call.turnId, call.callId, call.round, call.session, call.subjectId, call.askedAt, JSON.stringify(stored)]
      const result = await this.#pool.query(this.#sql.park, values)
      if (result.rowCount === 0) {
        throw duplicateError({ turnId: call.turnId, seq: call.decidedSeq, kind: 'approval/asked', callId: call.callId }, this.#location)
      }
    })
  }

  parked(query: ParkedQuery = {}): Promise<ParkedCall[]> {
    return this.#run(async () => {
      const where: string[] = []
      const values: unknown[] = []
      const add = (column: string, op: string, value: unknown) => {
        if (value === undefined) return
        values.push(value)
        where.push(`${column} ${op} $${values.length}`)
      }
      add('token', '=', query.token)
      add('turn_id', '=', query.turnId)
      add('call_id', '=', query.callId)
      add('session', '=', query.session)
      add('subject_id', '=', query.subjectId)
      add('asked_at', '<', query.askedBefore)
      if (query.settled !== true) where.push('settled IS NULL')
      const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''
      const sql = `SELECT call, decision, settled FROM ${this.#sql.parkedTable} ${filter} ORDER BY asked_at, token`
      return (await this.#pool.query<ParkedRow>(sql, values)).rows.map(parkedOf)
    })
  }

  decide(token: string, decision: ParkedDecision, askedAfter = Number.MIN_SAFE_INTEGER): Promise<Claimed | undefined> {
    return this.#claim(token, this.#sql.decide, decision, askedAfter)
  }

  expire(token: string, expiry: { readonly host: string; readonly at: number }, askedBefore: number): Promise<Claimed | undefined> {
    return this.#claim(token, this.#sql.expire, { kind: 'expire', host: expiry.host, at: expiry.at }, askedBefore)
  }

  settle(token: string, settlement: ParkedSettlement): Promise<Claimed | undefined> {
    return this.#claim(token, this.#sql.settle, settlement)
  }

  claimKey(key: string, holder: KeyHolder): Promise<KeyClaim> {
    return this.#run(async () => {
      await this.#pool.query(this.#sql.claimKey, [key, holder.turnId, holder.callId, holder.host, Date.now()])
      return (await this.#readKey(key)) ?? this.claimKey(key, holder)
    })
  }

  readKey(key: string): Promise<KeyClaim | undefined> {
    return this.#run(() => this.#readKey(key))
  }

  completeKey(key: string, holder: KeyHolder, result: StoredResult): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(this.#sql.completeKey, [key, holder.turnId, holder.callId, holder.host, JSON.stringify(result)])
    })
  }

  releaseKey(key: string, holder: KeyHolder): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(this.#sql.releaseKey, [key, holder.turnId, holder.callId, holder.host])
    })
  }

  grant(grant: SessionGrant): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(this.#sql.grant, [grant.session, grant.subjectId, grant.source, grant.fingerprint, Date.now()])
    })
  }

  hasGrant(grant: SessionGrant): Promise<boolean> {
    return this.#run(async () => {
      const { rowCount } = await this.#pool.query(this.#sql.hasGrant, [grant.session, grant.subjectId, grant.source, grant.fingerprint])
      return (rowCount ?? 0) > 0
    })
  }

  grants(query: GrantQuery = {}): Promise<StoredGrant[]> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<StoredGrant & { at: string | number }>(this.#sql.grants, grantParams(query))
      return rows.map((row) => ({ ...row, at: Number(row.at) }))
    })
  }

  revokeGrants(query: GrantQuery & { readonly session: string }): Promise<number> {
    return this.#run(async () => (await this.#pool.query(this.#sql.revokeGrants, grantParams(query))).rowCount ?? 0)
  }

  heartbeat(host: string, leaseMs: number): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(this.#sql.heartbeat, [host, leaseMs])
    })
  }

  retire(host: string): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(this.#sql.retire, [host])
    })
  }

  /** For crash repair (inside the store's gate): every round of the given turns. */
  async roundsOf(turnIds: readonly string[]): Promise<ParkedCall[]> {
    if (turnIds.length === 0) return []
    return (await this.#pool.query<ParkedRow>(this.#sql.roundsOf, [turnIds])).rows.map(parkedOf)
  }

  /** For crash repair: every heartbeat, and the database's clock to hold them against. */
  async beats(): Promise<{ beats: HostBeat[]; now: number }> {
    const { rows } = await this.#pool.query<{ host: string; beatAt: string; leaseMs: number; now: string }>(this.#sql.beats)
    const beats = rows.map((row) => ({ host: row.host, beatAt: Number(row.beatAt), leaseMs: row.leaseMs }))
    return { beats, now: rows.length > 0 ? Number(rows[0]!.now) : Date.now() }
  }

  async #readKey(key: string): Promise<KeyClaim | undefined> {
    const row = (await this.#pool.query<KeyClaim & { at: string; result: StoredResult | null }>(this.#sql.readKey, [key])).rows[0]
    if (row === undefined) return undefined
    const { result, at, ...claim } = row
    return result === null ? { ...claim, at: Number(at) } : { ...claim, at: Number(at), result }
  }

  /** `bound` is the `asked_at` limit of a decide or expire claim. */
  #claim(token: string, sql: string, value: unknown, bound?: number): Promise<Claimed | undefined> {
    return this.#run(async () => {
      const values = bound === undefined ? [token, JSON.stringify(value)] : [token, JSON.stringify(value), bound]
      const won = ((await this.#pool.query(sql, values)).rowCount ?? 0) > 0
      const row = (await this.#pool.query<ParkedRow>(this.#sql.byToken, [token])).rows[0]
      return row === undefined ? undefined : { won, call: parkedOf(row) }
    })
  }
}

function parkedOf(row: ParkedRow): ParkedCall {
  return storedRound(row.call, row.decision, row.settled)
}

function grantParams(query: GrantQuery): (string | null)[] {
  return [query.session ?? null, query.subjectId ?? null, query.source ?? null, query.fingerprint ?? null]
}

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
  StoredTask,
  TaskChange,
  TaskExpect,
  TaskStatus,
} from '../../seams/coordination.js'
import { storedRound, taskExpect } from '../../seams/coordination.js'
import { duplicateError, taskDuplicateError } from './events.js'
import { fencedError, newEpoch } from './hosts.js'

/** The database's clock in epoch milliseconds: hosts on several machines compare leases on one clock. */
const DB_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint'

/**
 * Whether the lease of host `$a` is still held under epoch `$b`. The key-share lock makes a fence
 * (which locks the row for update) wait for the write checking it, and the write after the fence
 * see it: a fenced host's write either landed before the fence or is refused.
 */
export function leaseHeld(hosts: string, a: number, b: number): string {
  return `EXISTS (SELECT 1 FROM ${hosts} WHERE host = $${a} AND epoch = $${b} AND fenced_at IS NULL FOR KEY SHARE)`
}

function statements(schema: string) {
  const parked = `${schema}.seam_journal_parked`
  const keys = `${schema}.seam_journal_keys`
  const grants = `${schema}.seam_journal_grants`
  const hosts = `${schema}.seam_journal_hosts`
  const tasks = `${schema}.seam_journal_tasks`
  return {
    createTask: `INSERT INTO ${tasks} (task_id, session, subject_id, status, created_at, updated_at, ttl_ms, state)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
    readTask: `SELECT task_id AS "taskId", session, subject_id AS "subjectId", status, created_at AS "createdAt",
      updated_at AS "updatedAt", ttl_ms AS "ttlMs", state FROM ${tasks} WHERE task_id = $1`,
    updateTask: `UPDATE ${tasks} SET status = $1, state = $2, updated_at = $3
      WHERE task_id = $4 AND status NOT IN ('completed', 'failed', 'cancelled') AND ($5::text IS NULL OR status = $5) AND ($6::bigint IS NULL OR updated_at = $6)`,
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
      ON CONFLICT (host) DO UPDATE SET beat_at = excluded.beat_at, lease_ms = excluded.lease_ms WHERE ${hosts}.fenced_at IS NULL`,
    retire: `DELETE FROM ${hosts} WHERE host = $1`,
    beats: `SELECT host, beat_at AS "beatAt", lease_ms AS "leaseMs", fenced_at IS NOT NULL AS fenced, ${DB_NOW} AS now FROM ${hosts}`,
    register: `INSERT INTO ${hosts} (host, beat_at, lease_ms, epoch, fenced_at) VALUES ($1, ${DB_NOW}, $2, $3, NULL)
      ON CONFLICT (host) DO UPDATE SET beat_at = excluded.beat_at, lease_ms = excluded.lease_ms, epoch = excluded.epoch, fenced_at = NULL`,
    held: `SELECT 1 FROM ${hosts} WHERE host = $1 AND epoch = $2 AND fenced_at IS NULL`,
    fence: `UPDATE ${hosts} SET fenced_at = ${DB_NOW} WHERE host IN (SELECT host FROM ${hosts}
      WHERE fenced_at IS NULL AND beat_at + lease_ms < ${DB_NOW} AND host <> $1 FOR UPDATE)`,
    /** The writes of a store holding a lease: each refused in its own statement once the lease is fenced. */
    leased: {
      park: `INSERT INTO ${parked} (token, turn_id, call_id, round, session, subject_id, asked_at, call)
        SELECT $1::text, $2::text, $3::text, $4::integer, $5::text, $6::text, $7::bigint, $8::json WHERE ${leaseHeld(hosts, 9, 10)} ON CONFLICT DO NOTHING`,
      decide: `UPDATE ${parked} SET decision = $2 WHERE token = $1 AND decision IS NULL AND settled IS NULL AND asked_at >= $3 AND ${leaseHeld(hosts, 4, 5)} RETURNING token`,
      expire: `UPDATE ${parked} SET settled = $2 WHERE token = $1 AND settled IS NULL AND decision IS NULL AND asked_at < $3 AND ${leaseHeld(hosts, 4, 5)} RETURNING token`,
      settle: `UPDATE ${parked} SET settled = $2 WHERE token = $1 AND settled IS NULL AND ${leaseHeld(hosts, 3, 4)} RETURNING token`,
      claimKey: `INSERT INTO ${keys} (key, turn_id, call_id, host, at)
        SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint WHERE ${leaseHeld(hosts, 6, 7)} ON CONFLICT DO NOTHING`,
      completeKey: `UPDATE ${keys} SET result = $5 WHERE key = $1 AND turn_id = $2 AND call_id = $3 AND host = $4 AND result IS NULL AND ${leaseHeld(hosts, 6, 7)}`,
      releaseKey: `DELETE FROM ${keys} WHERE key = $1 AND turn_id = $2 AND call_id = $3 AND host = $4 AND result IS NULL AND ${leaseHeld(hosts, 5, 6)}`,
      grant: `INSERT INTO ${grants} (session, subject_id, source, fingerprint, at)
        SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint WHERE ${leaseHeld(hosts, 6, 7)} ON CONFLICT DO NOTHING`,
      revokeGrants: `DELETE FROM ${grants}
        WHERE session = $1 AND ($2::text IS NULL OR subject_id = $2) AND ($3::text IS NULL OR source = $3) AND ($4::text IS NULL OR fingerprint = $4)
        AND ${leaseHeld(hosts, 5, 6)}`,
      fence: `UPDATE ${hosts} SET fenced_at = ${DB_NOW} WHERE host IN (SELECT host FROM ${hosts}
        WHERE fenced_at IS NULL AND beat_at + lease_ms < ${DB_NOW} AND host <> $1 AND ${leaseHeld(hosts, 1, 2)} FOR UPDATE)`,
      retire: `DELETE FROM ${hosts} WHERE host = $1 AND epoch = $2 AND fenced_at IS NULL`,
      heartbeat: `UPDATE ${hosts} SET beat_at = ${DB_NOW}, lease_ms = $2 WHERE host = $1 AND epoch = $3 AND fenced_at IS NULL`,
    },
  }
}

type Write = keyof ReturnType<typeof statements>['leased']

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
  /** The lease this store registered on its first heartbeat; until then its writes are not fenced. */
  #epoch: number | undefined
  #fenced = false
  readonly host: string

  /** `run` waits for the schema and refuses after close (the store's own gate). */
  constructor(pool: pg.Pool, host: string, schema: string, location: string, run: <T>(operation: () => Promise<T>) => Promise<T>) {
    this.host = host
    this.#pool = pool
    this.#location = location
    this.#run = run
    this.#sql = statements(schema)
  }

  /** The lease epoch this store's writes are checked against, once it holds one. */
  get epoch(): number | undefined {
    return this.#epoch
  }

  /** Throws `HOST_FENCED` once this store is known fenced; whether it holds a lease (its writes are then fenced). */
  leased(): boolean {
    if (this.#fenced) throw fencedError(this.host, this.#location)
    return this.#epoch !== undefined
  }

  /** After a fenced write changed nothing: throws `HOST_FENCED` (and remembers it) if the lease is gone. */
  async refusedUnlessHeld(what?: string): Promise<void> {
    if (this.#epoch === undefined || ((await this.#pool.query(this.#sql.held, [this.host, this.#epoch])).rowCount ?? 0) > 0) return
    this.#fenced = true
    throw fencedError(this.host, this.#location, what)
  }

  /**
   * For crash repair, before it reads what is open: fences every other host past its lease (on the
   * database's clock), so none of them lands a write after this; a fenced store's repair is refused.
   */
  async fenceExpired(): Promise<void> {
    if (!this.leased()) return void (await this.#pool.query(this.#sql.fence, [this.host]))
    await this.#pool.query(this.#sql.leased.fence, [this.host, this.#epoch])
    await this.refusedUnlessHeld('repair')
  }

  park(call: ParkedCall): Promise<void> {
    return this.#run(async () => {
      const { decision: _d, settled: _s, ...stored } = call
      const values = [call.token, call.turnId, call.callId, call.round, call.session, call.subjectId, call.askedAt, JSON.stringify(stored)]
      const result = await this.#write('park', this.#sql.park, values)
      if (result === 0) {
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
    return this.#claim(token, 'decide', decision, askedAfter)
  }

  expire(token: string, expiry: { readonly host: string; readonly at: number }, askedBefore: number): Promise<Claimed | undefined> {
    return this.#claim(token, 'expire', { kind: 'expire', host: expiry.host, at: expiry.at }, askedBefore)
  }

  settle(token: string, settlement: ParkedSettlement): Promise<Claimed | undefined> {
    return this.#claim(token, 'settle', settlement)
  }

  claimKey(key: string, holder: KeyHolder): Promise<KeyClaim> {
    return this.#run(async () => {
      await this.#write('claimKey', this.#sql.claimKey, [key, holder.turnId, holder.callId, holder.host, Date.now()])
      return (await this.#readKey(key)) ?? this.claimKey(key, holder)
    })
  }

  readKey(key: string): Promise<KeyClaim | undefined> {
    return this.#run(() => this.#readKey(key))
  }

  completeKey(key: string, holder: KeyHolder, result: StoredResult): Promise<void> {
    return this.#run(async () => {
      await this.#write('completeKey', this.#sql.completeKey, [key, holder.turnId, holder.callId, holder.host, JSON.stringify(result)])
    })
  }

  releaseKey(key: string, holder: KeyHolder): Promise<void> {
    return this.#run(async () => {
      await this.#write('releaseKey', this.#sql.releaseKey, [key, holder.turnId, holder.callId, holder.host])
    })
  }

  grant(grant: SessionGrant): Promise<void> {
    return this.#run(async () => {
      await this.#write('grant', this.#sql.grant, [grant.session, grant.subjectId, grant.source, grant.fingerprint, Date.now()])
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

  /** A revoke that matched nothing is not an error; a fenced store's revoke is refused all the same. */
  revokeGrants(query: GrantQuery & { readonly session: string }): Promise<number> {
    return this.#run(() => this.#write('revokeGrants', this.#sql.revokeGrants, grantParams(query)))
  }

  /**
   * This store's own first beat registers its lease under a new epoch; each later one renews it only
   * while it is held, and rejects with `HOST_FENCED` once another host fenced it. Another host's
   * beat (tests, tools) is written as given, without a lease.
   */
  heartbeat(host: string, leaseMs: number): Promise<void> {
    return this.#run(async () => {
      if (host !== this.host) {
        if (((await this.#pool.query(this.#sql.heartbeat, [host, leaseMs])).rowCount ?? 0) === 0) throw fencedError(host, this.#location, 'heartbeat')
        return
      }
      if (this.#epoch === undefined) {
        const epoch = newEpoch()
        await this.#pool.query(this.#sql.register, [host, leaseMs, epoch])
        this.#epoch = epoch
        return
      }
      await this.#write('heartbeat', this.#sql.heartbeat, [host, leaseMs])
    })
  }

  /** This store's own lease is retired only while it holds it: a fenced host's row stays, fenced. */
  retire(host: string): Promise<void> {
    return this.#run(async () => {
      if (host === this.host && this.#epoch !== undefined) return void (await this.#write('retire', this.#sql.retire, [host]))
      await this.#pool.query(this.#sql.retire, [host])
    })
  }

  createTask(task: StoredTask): Promise<void> {
    return this.#run(async () => {
      const values = [task.taskId, task.session, task.subjectId, task.status, task.createdAt, task.updatedAt, task.ttlMs, JSON.stringify(task.state)]
      if (((await this.#pool.query(this.#sql.createTask, values)).rowCount ?? 0) === 0) throw taskDuplicateError(task.taskId, this.#location)
    })
  }

  readTask(taskId: string): Promise<StoredTask | undefined> {
    return this.#run(async () => {
      const row = (await this.#pool.query<StoredTask & { createdAt: string; updatedAt: string; ttlMs: string }>(this.#sql.readTask, [taskId])).rows[0]
      if (row === undefined) return undefined
      return { ...row, createdAt: Number(row.createdAt), updatedAt: Number(row.updatedAt), ttlMs: Number(row.ttlMs) }
    })
  }

  updateTask(taskId: string, change: TaskChange, expect?: TaskStatus | TaskExpect): Promise<boolean> {
    return this.#run(async () => {
      const { status = null, updatedAt = null } = taskExpect(expect)
      const values = [change.status, JSON.stringify(change.state), change.at, taskId, status, updatedAt]
      return ((await this.#pool.query(this.#sql.updateTask, values)).rowCount ?? 0) > 0
    })
  }

  /** For crash repair (inside the store's gate): every round of the given turns. */
  async roundsOf(turnIds: readonly string[]): Promise<ParkedCall[]> {
    if (turnIds.length === 0) return []
    return (await this.#pool.query<ParkedRow>(this.#sql.roundsOf, [turnIds])).rows.map(parkedOf)
  }

  /** For crash repair: every heartbeat, and the database's clock to hold them against. */
  async beats(): Promise<{ beats: HostBeat[]; now: number }> {
    const { rows } = await this.#pool.query<{ host: string; beatAt: string; leaseMs: number; fenced: boolean; now: string }>(this.#sql.beats)
    const beats = rows.map((row) => ({ host: row.host, beatAt: Number(row.beatAt), leaseMs: row.leaseMs, fenced: row.fenced }))
    return { beats, now: rows.length > 0 ? Number(rows[0]!.now) : Date.now() }
  }

  async #readKey(key: string): Promise<KeyClaim | undefined> {
    const row = (await this.#pool.query<KeyClaim & { at: string; result: StoredResult | null }>(this.#sql.readKey, [key])).rows[0]
    if (row === undefined) return undefined
    const { result, at, ...claim } = row
    return result === null ? { ...claim, at: Number(at) } : { ...claim, at: Number(at), result }
  }

  /**
   * One write, with the lease check in its own statement while this store holds a lease (the leased
   * statement takes the epoch as its last parameter, after the host where it needs one); a write
   * that changed nothing is classified: fenced, or a no-op the caller handles. Its row count.
   */
  async #write(name: Write, sql: string, values: unknown[]): Promise<number> {
    if (!this.leased()) return (await this.#pool.query(sql, values)).rowCount ?? 0
    // The hosts row's own writes name the host already; the others add it before the epoch.
    const leasedValues = name === 'heartbeat' || name === 'retire' ? [...values, this.#epoch] : [...values, this.host, this.#epoch]
    const changed = (await this.#pool.query(this.#sql.leased[name], leasedValues)).rowCount ?? 0
    if (changed === 0) await this.refusedUnlessHeld()
    return changed
  }

  /** `bound` is the `asked_at` limit of a decide or expire claim. */
  #claim(token: string, name: 'decide' | 'expire' | 'settle', value: unknown, bound?: number): Promise<Claimed | undefined> {
    return this.#run(async () => {
      const values = bound === undefined ? [token, JSON.stringify(value)] : [token, JSON.stringify(value), bound]
      const won = (await this.#write(name, this.#sql[name], values)) > 0
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

import type { OAuthTokenStore } from '../../seams/oauth-tokens.js'
import pg from 'pg'
import { SeamError } from '../../errors.js'
import { checkEvent, closedError, duplicateError, type EventRow, toRow } from './events.js'
import { PipelinedGroupCommit } from './group-commit.js'
import { batchStatements, batchValues, isUniqueViolation, type Landed, outcomesOf } from './postgres-batch.js'
import { defaultHostId, type Owner, ownerGoneTest } from './hosts.js'
import { ensurePostgresSchema, quoteIdent } from './postgres-schema.js'
import { pageTurns } from './postgres-turns.js'
import { type PrivacyOptions, payloadLimit, protectEvent } from '../base/privacy.js'
import { leaseHeld, PostgresCoordination } from './postgres-coordination.js'
import { countRepaired, type OpenCall, ownersAfterParking, planRepair, withReservedSeqs } from './repair.js'
import { planTurnQuery } from './turn-query.js'
import type { JournalEvent, JournalStore, RepairOptions, RepairReport, TurnPage, TurnQuery } from '../../seams/journal.js'
import { PostgresOAuthTokens } from './oauth-tokens.js'

export interface PostgresJournalOptions extends PrivacyOptions {
  /** The schema holding the journal tables (default `public`); created when missing. */
  readonly schema?: string
  /**
   * Stamped on every event this store writes (default `hostname:pid`), so crash repair can tell a
   * live writer from a dead one. Give each live process its own.
   */
  readonly hostId?: string
  /**
   * How long `close()` waits for operations already started (default 5,000 ms). Past it, the
   * connections still busy are cut, their operations fail, and the store closes: a database behind
   * a dead link cannot hold a closing host forever.
   */
  readonly closeTimeoutMs?: number
  /**
   * Appends that arrive while a commit is in flight go out together, as one multi-row `INSERT` and
   * one commit (default `true`). `false` commits each append on its own: the benchmark's baseline.
   */
  readonly groupCommit?: boolean
}

const DEFAULT_CLOSE_TIMEOUT_MS = 5_000

/** A PostgreSQL journal store. */
export interface PostgresJournal extends JournalStore {
  /** The OAuth records of mounted MCP servers, in the journal's schema: `McpToolService({ auth: { store } })`. */
  readonly oauthTokens: OAuthTokenStore
}

/**
 * A journal in PostgreSQL that several hosts share. The store is usable at once; the connection and
 * the tables are set up in the background, and the first operation waits for (or fails with) that.
 */
export function postgresJournal(connectionString: string, options: PostgresJournalOptions = {}): PostgresJournal {
  return new PostgresJournalStore(connectionString, options)
}

class PostgresJournalStore implements PostgresJournal {
  readonly kind = 'postgres'
  readonly location: string
  readonly #pool: pg.Pool
  #ready: Promise<void>
  #unprepared = false
  readonly #schema: string
  readonly #host: string
  readonly #maxBytes: number
  readonly #table: string
  readonly #sql: ReturnType<typeof statements>
  readonly #batch: ReturnType<typeof batchStatements>
  readonly #inFlight = new Set<Promise<unknown>>()
  /** Every connection the pool holds, so a close past its bound can cut the busy ones. */
  readonly #clients = new Set<pg.PoolClient>()
  readonly #closeTimeoutMs: number
  #closing: Promise<void> | undefined
  readonly #group: PipelinedGroupCommit<EventRow> | undefined
  readonly coordination: PostgresCoordination
  readonly oauthTokens: OAuthTokenStore

  constructor(connectionString: string, options: PostgresJournalOptions) {
    const schema = options.schema ?? 'public'
    this.location = redactConnectionString(connectionString) + (schema === 'public' ? '' : ` (schema ${schema})`)
    this.#host = options.hostId ?? defaultHostId()
    this.#maxBytes = payloadLimit(options)
    this.#table = `${quoteIdent(schema)}.seam_journal_events`
    this.#sql = statements(this.#table, `${quoteIdent(schema)}.seam_journal_hosts`)
    this.#batch = batchStatements(this.#table, `${quoteIdent(schema)}.seam_journal_hosts`)
    this.#pool = new pg.Pool({ connectionString })
    // An idle connection's error (a server restart) would otherwise crash the process; the next query reports it.
    this.#pool.on('error', () => undefined)
    this.#pool.on('connect', (client) => this.#clients.add(client))
    this.#pool.on('remove', (client) => this.#clients.delete(client))
    this.#closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS
    if (!Number.isSafeInteger(this.#closeTimeoutMs) || this.#closeTimeoutMs < 0) {
      throw new SeamError('INVALID_OPTIONS', `postgresJournal closeTimeoutMs must be a non-negative integer, got ${String(options.closeTimeoutMs)}`)
    }
    this.#schema = schema
    this.#ready = this.#prepare()
    this.coordination = new PostgresCoordination(this.#pool, this.#host, quoteIdent(schema), this.location, (operation) => this.#run(operation))
    this.oauthTokens = new PostgresOAuthTokens(this.#pool, quoteIdent(schema), (operation) => this.#run(operation))
    this.#group = options.groupCommit === false ? undefined : new PipelinedGroupCommit((rows) => this.#commit(rows), isRowFault)
  }

  /**
   * Creates the schema and table if needed. A failure (the server not up yet) is reported by the
   * operations waiting for it, and the next operation tries again rather than failing for good.
   */
  #prepare(): Promise<void> {
    const ready = ensurePostgresSchema(this.#pool, this.#schema, this.location)
    ready.catch(() => {
      if (this.#ready === ready) this.#unprepared = true
    })
    return ready
  }

  append(event: JournalEvent): Promise<void> {
    return this.#run(async () => {
      checkEvent(event)
      const row = toRow(protectEvent(event, this.#maxBytes), this.#host)
      if (this.#group !== undefined) return this.#group.push(row)
      const [refused] = await this.#commit([row])
      if (refused !== undefined) throw refused
    })
  }

  onCommit(listener: (events: number) => void): () => void {
    const listeners = this.#group?.listeners
    listeners?.add(listener)
    return () => listeners?.delete(listener)
  }

  /**
   * Inserts `rows` in one commit: per row, its duplicate error or `undefined`.
   * Holding a lease, the statement checks it (refused whole, `HOST_FENCED`, once it is fenced).
   */
  async #commit(rows: readonly EventRow[]): Promise<(Error | undefined)[]> {
    if (rows.length === 1) return [await this.#commitOne(rows[0]!)]
    // Most batches hold no duplicate: a plain INSERT lands them whole, without the speculative
    // insertion `ON CONFLICT` costs per row and with no rows to send back. When it lands nothing (a
    // uniqueness refusal fails it whole; a fenced lease admits no row), the exact statement tells
    // each row's outcome, still in one commit.
    const leased = this.coordination.leased()
    const sql = leased ? this.#batch.leased : this.#batch.open
    const values = batchValues(rows, this.#host, leased ? this.coordination.epoch : undefined)
    try {
      if ((await this.#pool.query({ ...sql.whole, values })).rowCount === rows.length) return rows.map(() => undefined)
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
    }
    const landed = (await this.#pool.query<Landed>({ ...sql.exact, values })).rows
    if (landed.length === 0 && leased) await this.coordination.refusedUnlessHeld()
    return outcomesOf(rows, landed, this.location)
  }

  async #commitOne(row: EventRow): Promise<Error | undefined> {
    const coordination = this.coordination
    const leased = coordination.leased()
    const values = [row.turnId, row.seq, row.kind, row.callId, row.at, row.host, row.payload]
    // Holding a lease: the insert checks it in the same statement, refused once it is fenced.
    const query = leased
      ? { name: 'seam_journal_append_leased', text: this.#sql.insertLeased, values: [...values, coordination.epoch!] }
      : { name: 'seam_journal_append', text: this.#sql.insert, values }
    if (((await this.#pool.query(query)).rowCount ?? 0) === 1) return undefined
    if (leased) await coordination.refusedUnlessHeld()
    return duplicateError(row, this.location)
  }

  read(turnId: string): Promise<JournalEvent[]> {
    return this.#run(async () => payloads(await this.#pool.query(this.#sql.read, [turnId])))
  }

  tail(limit: number): Promise<JournalEvent[]> {
    return this.#run(async () => (limit > 0 ? payloads(await this.#pool.query(this.#sql.tail, [Math.floor(limit)])) : []))
  }

  /** See `JournalStore.turns`. */
  turns(query?: TurnQuery): Promise<TurnPage> {
    try {
      const plan = planTurnQuery(query)
      return this.#run(() => pageTurns(this.#pool, this.#table, plan))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /**
   * See `JournalStore.repair`. Every host may repair at once: each inserts its plan in one
   * statement, and the unique indexes turn every event another repair already wrote into a no-op,
   * so each call gets one result. Another machine's open turns stay open unless `hosts: 'all'`.
   */
  repair(options: RepairOptions = {}): Promise<RepairReport> {
    return this.#run(async () => {
      // First: every host past its lease is fenced before its open calls are read, so none of them
      // lands another write (a fenced store's own repair is refused here).
      await this.coordination.fenceExpired()
      const { beats, now } = await this.coordination.beats()
      const gone = ownerGoneTest(this.#host, options.hosts, beats, now)
      const open = (await this.#pool.query<OwnedRow & OpenCall>(this.#sql.openCalls)).rows.map((row) => ({ ...row, ...owner(row) }))
      const openTurns = (await this.#pool.query<OwnedRow & { turnId: string }>(this.#sql.openTurns)).rows
        .filter((row) => gone(owner(row)))
        .map((row) => row.turnId)
      const parked = await this.coordination.roundsOf([...new Set([...open.map((call) => call.turnId), ...openTurns])])
      const openCalls = ownersAfterParking(open, parked)
        .filter(gone)
        .map(({ turnId, callId, seq }) => ({ turnId, callId, seq }))
      if (openCalls.length === 0 && openTurns.length === 0) return { results: 0, turns: 0 }
      const turnIds = [...new Set([...openCalls.map((call) => call.turnId), ...openTurns])]
      const seqs = await this.#pool.query<{ turnId: string; max: number }>(this.#sql.maxSeq, [turnIds])
      const maxSeq = withReservedSeqs(new Map(seqs.rows.map((row) => [row.turnId, row.max])), parked)
      const rows = planRepair({ openCalls, openTurns, maxSeq, at: Date.now() }).map((event) => toRow(event, this.#host))
      const columns = [
        rows.map((row) => row.turnId),
        rows.map((row) => row.seq),
        rows.map((row) => row.kind),
        rows.map((row) => row.callId),
        rows.map((row) => row.at),
        rows.map((row) => row.host),
        rows.map((row) => row.payload),
      ]
      const coordination = this.coordination
      if (!coordination.leased()) return countRepaired((await this.#pool.query<{ kind: JournalEvent['kind'] }>(this.#sql.insertMany, columns)).rows)
      const written = (await this.#pool.query<{ kind: JournalEvent['kind'] }>(this.#sql.insertManyLeased, [...columns, this.#host, coordination.epoch])).rows
      if (written.length === 0) await coordination.refusedUnlessHeld('repair')
      return countRepaired(written)
    })
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      // Operations already started finish before the pool ends, within the bound.
      const settled = await settledWithin(Promise.allSettled(this.#inFlight), this.#closeTimeoutMs)
      // Ending first: the pool opens no new connection for operations still queued.
      const ended = this.#pool.end()
      if (!settled) {
        // The link is taken for dead: every connection's socket is cut (those still connecting
        // too), so queries in flight fail at once and no goodbye waits on a peer that will not answer.
        for (const client of this.#connections()) cut(client)
      }
      await settledWithin(ended, this.#closeTimeoutMs)
    })()
    return this.#closing
  }

  /** The pool's connections, those still connecting included (pg-pool's own list, when it has one). */
  #connections(): Iterable<pg.PoolClient> {
    const all = (this.#pool as unknown as { _clients?: unknown })._clients
    return Array.isArray(all) ? (all as pg.PoolClient[]) : this.#clients
  }

  #run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#closing !== undefined) return Promise.reject(closedError(this.location))
    if (this.#unprepared) {
      this.#unprepared = false
      this.#ready = this.#prepare()
    }
    const running = this.#ready.then(operation)
    this.#inFlight.add(running)
    const forget = (): void => {
      this.#inFlight.delete(running)
    }
    running.then(forget, forget)
    return running
  }
}

function statements(table: string, hosts: string) {
  return {
    insert: `INSERT INTO ${table} (turn_id, seq, kind, call_id, at, host, payload)
      VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
    /** `insert` for a store holding a lease ($6 is its host, $8 its epoch): refused in the same statement once fenced. */
    insertLeased: `INSERT INTO ${table} (turn_id, seq, kind, call_id, at, host, payload)
      SELECT $1::text, $2::integer, $3::text, $4::text, $5::bigint, $6::text, $7::json WHERE ${leaseHeld(hosts, 6, 8)}
      ON CONFLICT DO NOTHING`,
    insertMany: `INSERT INTO ${table} (turn_id, seq, kind, call_id, at, host, payload)
      SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::json[])
      ON CONFLICT DO NOTHING RETURNING kind`,
    insertManyLeased: `INSERT INTO ${table} (turn_id, seq, kind, call_id, at, host, payload)
      SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::json[])
      WHERE ${leaseHeld(hosts, 8, 9)} ON CONFLICT DO NOTHING RETURNING kind`,
    read: `SELECT payload FROM ${table} WHERE turn_id = $1 ORDER BY seq`,
    tail: `SELECT payload FROM (SELECT id, payload FROM ${table} ORDER BY id DESC LIMIT $1) AS last ORDER BY id`,
    openCalls: `SELECT c.turn_id AS "turnId", c.call_id AS "callId", c.host, c.at FROM ${table} c
      WHERE c.kind = 'tool/call' AND NOT EXISTS (SELECT 1 FROM ${table} r
        WHERE r.turn_id = c.turn_id AND r.call_id = c.call_id AND r.kind = 'tool/result')
      ORDER BY c.turn_id, c.seq`,
    openTurns: `SELECT b.turn_id AS "turnId", b.host, b.at FROM ${table} b
      WHERE b.kind = 'turn/begin' AND NOT EXISTS (SELECT 1 FROM ${table} e
        WHERE e.turn_id = b.turn_id AND e.kind = 'turn/end' AND e.call_id IS NULL)
      ORDER BY b.turn_id`,
    maxSeq: `SELECT turn_id AS "turnId", max(seq) AS max FROM ${table} WHERE turn_id = ANY($1) GROUP BY turn_id`,
  }
}

/**
 * Whether a batch's failure may be one row's own (a value the column or a rule refuses: SQLSTATE
 * classes 22 and 23), so each row is committed alone; anything else (a lost connection) is the batch's.
 */
function isRowFault(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'))
}

/** The writer columns of an open call or turn; `bigint` arrives as a string. */
interface OwnedRow {
  readonly host: string
  readonly at: string
}

function owner(row: OwnedRow): Owner {
  return { host: row.host, at: Number(row.at) }
}

/** `json` columns arrive parsed. */
function payloads(result: pg.QueryResult): JournalEvent[] {
  return result.rows.map((row: { payload: JournalEvent }) => row.payload)
}

/** The connection string with any password (in the URL or a `password=` setting) replaced by `***`. */
export function redactConnectionString(value: string): string {
  try {
    const url = new URL(value)
    if (url.password !== '') url.password = '***'
    for (const key of [...url.searchParams.keys()]) {
      if (/pass/i.test(key)) url.searchParams.set(key, '***')
    }
    return url.toString()
  } catch {
    return value.replace(/(pass\w*\s*=\s*)('[^']*'|\S+)/gi, '$1***')
  }
}

/**
 * Cuts a connection's socket without waiting on its peer: its query in flight (or its connect)
 * fails at once, and the pool then drops it. (`client.end()` would wait for the server's goodbye,
 * which a dead link never sends.)
 */
function cut(client: pg.PoolClient): void {
  ;(client as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.()
}

/** Whether `promise` settled within `ms` (the timer is cleared either way). */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, ms, false)
  })
  try {
    return await Promise.race([promise.then(
      () => true,
      () => true,
    ), expired])
  } finally {
    clearTimeout(timer)
  }
}

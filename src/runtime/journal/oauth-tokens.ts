import type pg from 'pg'
import type { OAuthRecord, OAuthTokenStore } from '../../seams/oauth-tokens.js'
import type { SqliteDatabase } from './sqlite-driver.js'

/**
 * The journal database's `seam_journal_oauth` table as an `OAuthTokenStore`: every host on the
 * same journal reads the tokens another obtained or refreshed. A row is one server's JSON record.
 */
export class SqliteOAuthTokens implements OAuthTokenStore {
  readonly #db: SqliteDatabase
  readonly #assertOpen: () => void

  constructor(db: SqliteDatabase, assertOpen: () => void) {
    this.#db = db
    this.#assertOpen = assertOpen
  }

  async get(key: string): Promise<OAuthRecord | undefined> {
    this.#assertOpen()
    const text = this.#db.prepare('SELECT record FROM seam_journal_oauth WHERE key = ?', { pluck: true }).get(key) as string | undefined
    return text === undefined ? undefined : (JSON.parse(text) as OAuthRecord)
  }

  async set(key: string, record: OAuthRecord): Promise<void> {
    this.#assertOpen()
    this.#db
      .prepare('INSERT INTO seam_journal_oauth (key, record, at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET record = excluded.record, at = excluded.at')
      .run(key, JSON.stringify(record), Date.now())
  }

  async delete(key: string): Promise<void> {
    this.#assertOpen()
    this.#db.prepare('DELETE FROM seam_journal_oauth WHERE key = ?').run(key)
  }
}

/** The same table in the journal's PostgreSQL schema (`schema` quoted already). */
export class PostgresOAuthTokens implements OAuthTokenStore {
  readonly #pool: pg.Pool
  readonly #table: string
  readonly #run: <T>(operation: () => Promise<T>) => Promise<T>

  constructor(pool: pg.Pool, schema: string, run: <T>(operation: () => Promise<T>) => Promise<T>) {
    this.#pool = pool
    this.#table = `${schema}.seam_journal_oauth`
    this.#run = run
  }

  get(key: string): Promise<OAuthRecord | undefined> {
    return this.#run(async () => (await this.#pool.query<{ record: OAuthRecord }>(`SELECT record FROM ${this.#table} WHERE key = $1`, [key])).rows[0]?.record)
  }

  set(key: string, record: OAuthRecord): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(
        `INSERT INTO ${this.#table} (key, record, at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET record = excluded.record, at = excluded.at`,
        [key, JSON.stringify(record), Date.now()],
      )
    })
  }

  delete(key: string): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(`DELETE FROM ${this.#table} WHERE key = $1`, [key])
    })
  }
}

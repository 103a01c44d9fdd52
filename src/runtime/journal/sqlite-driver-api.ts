// The driver interface the journal's SQL runs through; the back ends import only this file.

/**
 * The SQLite library behind a journal: Node's own `node:sqlite` (Node 22.13+ and 24, nothing to
 * install or compile) or better-sqlite3 (an optional peer dependency, for Node 20).
 */
export type SqliteDriver = 'node' | 'better-sqlite3'

/** What a statement binds: SQLite's storage classes. */
export type SqliteValue = string | number | bigint | null | Uint8Array

export interface SqliteRunResult {
  readonly changes: number
  readonly lastInsertRowid: number | bigint
}

/** A prepared statement; with `pluck`, `get` and `all` give each row's first column instead of the row. */
export interface SqliteStatement {
  run(...params: SqliteValue[]): SqliteRunResult
  get(...params: SqliteValue[]): unknown
  all(...params: SqliteValue[]): unknown[]
}

/**
 * The little the journal needs of a SQLite library, which both back ends implement alike: the SQL
 * and the journal's logic stay the same whichever runs them.
 */
export interface SqliteDatabase {
  readonly driver: SqliteDriver
  prepare(sql: string, options?: { readonly pluck?: boolean }): SqliteStatement
  exec(sql: string): void
  /**
   * `body` wrapped in a transaction (`BEGIN` or `BEGIN IMMEDIATE`): committed when it returns,
   * rolled back when it throws; inside another transaction, a savepoint.
   */
  transaction<A extends unknown[], R>(body: (...args: A) => R, mode?: 'deferred' | 'immediate'): (...args: A) => R
  close(): void
}

/** How long a statement waits for another connection's write lock before `SQLITE_BUSY` (better-sqlite3's default). */
export const BUSY_TIMEOUT_MS = 5000

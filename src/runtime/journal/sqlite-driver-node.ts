import type { SqliteDatabase, SqliteRunResult, SqliteStatement, SqliteValue } from './sqlite-driver-api.js'
import { BUSY_TIMEOUT_MS } from './sqlite-driver-api.js'

// The part of `node:sqlite` the journal uses, the same on Node 22.13+ and 24 (@types/node 20 has no types for it).
interface StatementSync {
  run(...params: SqliteValue[]): SqliteRunResult
  get(...params: SqliteValue[]): Record<string, unknown> | undefined
  all(...params: SqliteValue[]): Record<string, unknown>[]
  /** Node 22.16+ and 24 only. */
  setReturnArrays?(enabled: boolean): void
}
interface DatabaseSync {
  prepare(sql: string): StatementSync
  exec(sql: string): void
  close(): void
  /** Node 22.16+ and 24 only. */
  readonly isTransaction?: boolean
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => DatabaseSync
}

/** The one warning kept out of the user's terminal: the journal, not the user, chose this module. */
const EXPERIMENTAL = /^SQLite is an experimental feature/

let loaded: NodeSqliteModule | null | undefined

/**
 * `node:sqlite`, or `undefined` where this Node.js has none (Node 20, Node 22 before 22.13). Node 22
 * emits an ExperimentalWarning when the module loads, synchronously: `process.emitWarning` is
 * wrapped for that moment only and drops exactly that warning, so every other warning still shows.
 */
export function nodeSqlite(): NodeSqliteModule | undefined {
  if (loaded === undefined) {
    const emitWarning = process.emitWarning
    process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
      const first = rest[0]
      const type = typeof first === 'string' ? first : (first as { type?: unknown } | undefined)?.type
      const name = warning instanceof Error ? warning.name : type
      const text = warning instanceof Error ? warning.message : warning
      if (name === 'ExperimentalWarning' && EXPERIMENTAL.test(String(text))) return
      return Reflect.apply(emitWarning, this, [warning, ...rest])
    } as typeof process.emitWarning
    try {
      loaded = (process.getBuiltinModule('node:sqlite') as NodeSqliteModule | undefined) ?? null
    } finally {
      process.emitWarning = emitWarning
    }
  }
  return loaded ?? undefined
}

/** The database at `path` through `node:sqlite` (call only where `nodeSqlite()` found it). */
export function openNodeSqlite(path: string, readonly: boolean): SqliteDatabase {
  const { DatabaseSync } = nodeSqlite()!
  const db = new DatabaseSync(path, { readOnly: readonly })
  // node:sqlite waits for no lock by default (its `timeout` option is Node 22.16+ only): wait like better-sqlite3.
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  const control = (sql: string) => {
    const statement = db.prepare(sql)
    return () => void statement.run()
  }
  const begin = { deferred: control('BEGIN'), immediate: control('BEGIN IMMEDIATE') }
  const commit = control('COMMIT')
  const rollback = control('ROLLBACK')
  let depth = 0
  let savepoints = 0
  return {
    driver: 'node',
    prepare(sql, options) {
      const statement = db.prepare(sql)
      return options?.pluck === true ? plucking(statement) : statement
    },
    exec(sql) {
      db.exec(sql)
    },
    transaction(body, mode = 'deferred') {
      return (...args) => {
        if (depth > 0) {
          // Nested, as better-sqlite3 does it: a savepoint, released or rolled back to.
          const name = `seam_${++savepoints}`
          db.exec(`SAVEPOINT ${name}`)
          try {
            const result = body(...args)
            db.exec(`RELEASE ${name}`)
            return result
          } catch (error) {
            db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`)
            throw error
          }
        }
        begin[mode]()
        depth = 1
        try {
          const result = body(...args)
          commit()
          return result
        } catch (error) {
          // SQLite may have rolled back already (a full disk, an interrupted commit).
          if (db.isTransaction !== false) {
            try {
              rollback()
            } catch {
              // No transaction left to roll back: the error below is the one to report.
            }
          }
          throw error
        } finally {
          depth = 0
        }
      }
    },
    close() {
      db.close()
    },
  }
}

/** The statement with each row's first column for a row (`pluck`). */
function plucking(statement: StatementSync): SqliteStatement {
  if (statement.setReturnArrays !== undefined) {
    statement.setReturnArrays(true)
    const arrays = statement as unknown as { get(...p: SqliteValue[]): unknown[] | undefined; all(...p: SqliteValue[]): unknown[][] }
    return {
      run: (...params) => statement.run(...params),
      get: (...params) => arrays.get(...params)?.[0],
      all: (...params) => arrays.all(...params).map((row) => row[0]),
    }
  }
  return {
    run: (...params) => statement.run(...params),
    get: (...params) => firstColumn(statement.get(...params)),
    all: (...params) => statement.all(...params).map(firstColumn),
  }
}

function firstColumn(row: Record<string, unknown> | undefined): unknown {
  for (const key in row) return row[key]
  return undefined
}

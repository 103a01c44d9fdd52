import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'
import { SeamError } from '../../errors.js'
import type { SqliteDatabase, SqliteStatement } from './sqlite-driver-api.js'

type BetterSqliteModule = typeof BetterSqlite3

let loaded: BetterSqliteModule | null | undefined

/**
 * better-sqlite3, an optional peer dependency: resolved from this package's own location (the
 * user's node_modules) on first use; `null` when it is not installed.
 */
function betterSqlite(): BetterSqliteModule | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('better-sqlite3') as BetterSqliteModule
    } catch (error) {
      const { code, message } = error as { code?: unknown; message?: unknown }
      // Only better-sqlite3 itself missing; a broken install of it (a dependency of its own missing) is told as it is.
      if (code !== 'MODULE_NOT_FOUND' || !String(message).includes("'better-sqlite3'")) throw error
      loaded = null
    }
  }
  return loaded
}

/**
 * The database at `path` through better-sqlite3; `undefined` when it is not installed. Statements
 * and transactions are better-sqlite3's own: this back end adds no call of its own to them.
 */
export function openBetterSqlite(path: string, readonly: boolean): SqliteDatabase | undefined {
  const Database = betterSqlite()
  if (Database === null) return undefined
  let db: BetterSqlite3.Database
  try {
    db = new Database(path, { readonly })
  } catch (error) {
    throw nativeModuleFault(error) ?? error
  }
  return {
    driver: 'better-sqlite3',
    prepare(sql, options) {
      const statement = db.prepare(sql)
      return (options?.pluck === true ? statement.pluck() : statement) as SqliteStatement
    },
    exec(sql) {
      db.exec(sql)
    },
    transaction(body, mode = 'deferred') {
      const transaction = db.transaction(body)
      return mode === 'immediate' ? transaction.immediate : transaction
    },
    close() {
      db.close()
    },
  }
}

/**
 * better-sqlite3 loads its compiled module when the first database opens. Where its install script
 * did not run (npm 11 and later skip the install scripts of packages a project has not allowed) or
 * built it for another Node, that fails with a loader message that names neither the cause nor the
 * fix: this says both. `undefined` for any other error.
 */
export function nativeModuleFault(error: unknown): SeamError | undefined {
  const message = error instanceof Error ? error.message : ''
  const missing = message.includes('Could not locate the bindings file')
  const otherNode = (error as { code?: unknown } | null)?.code === 'ERR_DLOPEN_FAILED' && message.includes('better_sqlite3.node')
  if (!missing && !otherNode) return undefined
  const why = missing ? 'is not built (its install script did not run)' : `was built for another Node.js version than this one (${process.version})`
  return new SeamError('JOURNAL_UNAVAILABLE', `The SQLite journal needs better-sqlite3's compiled module, which ${why}.`, {
    cause: error,
    hint: 'build it with `npm rebuild better-sqlite3` (on npm 11 or later, first allow it: `npm install-scripts approve better-sqlite3`); on Node.js 22.13+ or 24, leave `driver` out to use node:sqlite; or use memoryJournal() or postgresJournal()',
  })
}

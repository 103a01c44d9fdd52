import { SeamError } from '../../errors.js'
import { openBetterSqlite } from './sqlite-driver-better.js'
import { nodeSqlite, openNodeSqlite } from './sqlite-driver-node.js'
import type { SqliteDatabase, SqliteDriver } from './sqlite-driver-api.js'

export type { SqliteDatabase, SqliteDriver, SqliteStatement, SqliteValue } from './sqlite-driver-api.js'

export interface OpenSqliteOptions {
  /** Default: `node` where `node:sqlite` is available, else `better-sqlite3`. */
  readonly driver?: SqliteDriver | undefined
  readonly readonly?: boolean
}

export const INSTALL_BETTER_SQLITE3 = 'npm install better-sqlite3@12'

/** Opens the database file at `path` with the chosen (or the default) driver; `JOURNAL_UNAVAILABLE` when it is missing. */
export function openSqlite(path: string, options: OpenSqliteOptions = {}): SqliteDatabase {
  const driver = options.driver ?? (nodeSqlite() === undefined ? 'better-sqlite3' : 'node')
  const readonly = options.readonly === true
  if (driver === 'node') {
    if (nodeSqlite() === undefined) throw noNodeSqlite()
    return openNodeSqlite(path, readonly)
  }
  const opened = openBetterSqlite(path, readonly)
  if (opened !== undefined) return opened
  throw options.driver === undefined ? neitherDriver() : noBetterSqlite()
}

/** The drivers that open a database in this process (better-sqlite3 only where its compiled module loads). */
export function availableSqliteDrivers(): SqliteDriver[] {
  const drivers: SqliteDriver[] = []
  if (nodeSqlite() !== undefined) drivers.push('node')
  try {
    const db = openBetterSqlite(':memory:', false)
    db?.close()
    if (db !== undefined) drivers.push('better-sqlite3')
  } catch {
    // Installed but not built for this Node: not available here.
  }
  return drivers
}

/** SQLite's error code name (`SQLITE_NOTADB`, `SQLITE_CORRUPT_VTAB`, …) of either driver's errors, or `undefined`. */
export function sqliteErrorCode(error: unknown): string | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown }
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return code
  // node:sqlite: `ERR_SQLITE_ERROR` and SQLite's numeric (extended) result code.
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') return PRIMARY_CODES[errcode & 0xff]
  return undefined
}

/** The primary result codes the journal tells apart (https://sqlite.org/rescode.html). */
const PRIMARY_CODES: Readonly<Record<number, string>> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  19: 'SQLITE_CONSTRAINT',
  26: 'SQLITE_NOTADB',
}

function neitherDriver(): SeamError {
  return new SeamError(
    'JOURNAL_UNAVAILABLE',
    `The SQLite journal needs better-sqlite3 on this Node.js (${process.version}), which has no node:sqlite: install it with \`${INSTALL_BETTER_SQLITE3}\`.`,
    { hint: `\`${INSTALL_BETTER_SQLITE3}\`; or run on Node.js 22.13+ or 24, whose own node:sqlite needs nothing installed; or use memoryJournal() or postgresJournal()` },
  )
}

function noBetterSqlite(): SeamError {
  return new SeamError('JOURNAL_UNAVAILABLE', `sqliteJournal({ driver: 'better-sqlite3' }) needs better-sqlite3, which is not installed: \`${INSTALL_BETTER_SQLITE3}\`.`, {
    hint: `\`${INSTALL_BETTER_SQLITE3}\`, or leave \`driver\` out to use node:sqlite where this Node.js has it`,
  })
}

function noNodeSqlite(): SeamError {
  return new SeamError(
    'JOURNAL_UNAVAILABLE',
    `sqliteJournal({ driver: 'node' }) needs node:sqlite, which this Node.js (${process.version}) does not have (Node.js 22.13+ and 24 do).`,
    { hint: `leave \`driver\` out, or use driver 'better-sqlite3' (\`${INSTALL_BETTER_SQLITE3}\`)` },
  )
}

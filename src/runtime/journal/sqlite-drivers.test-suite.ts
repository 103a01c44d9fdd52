import { availableSqliteDrivers, type SqliteDriver } from './sqlite-driver.js'

/**
 * The SQLite drivers whose journal tests run on this Node: `node:sqlite` wherever Node has it, and
 * better-sqlite3 wherever its compiled module loads (CI builds it for Node 20 only, so on 22 and 24
 * it runs where a developer built it). On a Node without `node:sqlite` better-sqlite3 is the journal,
 * so it is tested there even when it cannot load: its tests fail instead of vanishing.
 */
export function sqliteDriversUnderTest(): SqliteDriver[] {
  const available = availableSqliteDrivers()
  return available.includes('node') ? available : ['better-sqlite3']
}

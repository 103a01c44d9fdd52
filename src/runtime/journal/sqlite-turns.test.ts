import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { sqliteJournal } from './sqlite.js'
import { openSqlite } from './sqlite-driver.js'
import { sqliteDriversUnderTest } from './sqlite-drivers.test-suite.js'
import { turnPageSql } from './sqlite-turns.js'
import { TURN_FILTERS, type TurnFilter } from './turn-query.js'

/** Every filter alone, none, and the filters in pairs and all at once, each one driving in turn. */
const SHAPES: TurnFilter[][] = [
  [],
  ...TURN_FILTERS.map((name) => [name]),
  ...TURN_FILTERS.map((name) => [name, ...TURN_FILTERS.filter((other) => other !== name)]),
  ['tool', 'status'],
]

describe.each(sqliteDriversUnderTest())('sqlite turn queries (%s)', (driver) => {
  it('answers every shape of query from indexes: no table scan, no sort of the matches', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-turn-plan-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    // Opening the journal adds the indexes, to a new file as to an old one.
    await sqliteJournal(join(dir, 'journal.db'), { driver }).close()
    const db = openSqlite(join(dir, 'journal.db'), { driver, readonly: true })
    onTestFinished(() => {
      db.close()
    })
    for (const shape of SHAPES) {
      const sql = turnPageSql(shape)
      const steps = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...shape.map(() => 'x'), 10, 51) as { detail: string }[]).map(
        (row) => row.detail,
      )
      // `SCAN p` walks the page itself (at most `limit + 1` rows), a `SCAN (subquery-n)` the few rows
      // a turn's summary made (its first tool names); every events lookup is a SEARCH.
      const scans = steps.filter((step) => /^SCAN (?!p$|\(subquery-\d+\)$)/.test(step) || step.includes('TEMP B-TREE'))
      expect(scans, `${shape.join('+') || 'no filter'}: ${steps.join(' | ')}`).toEqual([])
      expect(steps.some((step) => step.startsWith('SEARCH d USING'))).toBe(true)
    }
  })
})

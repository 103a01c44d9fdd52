import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it, onTestFinished } from 'vitest'
import { sqliteJournal } from './sqlite.js'
import { INSTALL_BETTER_SQLITE3 } from './sqlite-driver.js'

const run = promisify(execFile)
/** Built by the global setup (test/build-dist.ts): the child processes run the shipped code. */
const dist = fileURLToPath(new URL('../../../dist/', import.meta.url))
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
/** Node.js has `node:sqlite` without a flag from 22.13 on. */
const nodeHasSqlite = major > 22 || (major === 22 && minor >= 13)

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seam-driver-'))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Runs an ES module on this Node; its stdout and stderr. */
async function node(script: string, args: string[] = []): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [...args, '--input-type=module', '-e', script], { cwd: tmpdir() })
}

describe('the SQLite journal’s driver', () => {
  it('is node:sqlite where this Node.js has it, else better-sqlite3', async () => {
    const store = sqliteJournal(join(tempDir(), 'journal.db'))
    onTestFinished(() => store.close())
    expect(store.driver).toBe(nodeHasSqlite ? 'node' : 'better-sqlite3')
  })

  // Only where there is a node:sqlite to load (Node 22 warns; 24.x stopped warning).
  if (nodeHasSqlite) it('keeps node:sqlite’s ExperimentalWarning out of the terminal, and every other warning in it', async () => {
    const { stderr } = await node(`
      const { sqliteJournal } = await import(${JSON.stringify(pathToFileURL(join(dist, 'runtime/journal/sqlite.js')).href)})
      const store = sqliteJournal(${JSON.stringify(join(tempDir(), 'journal.db'))})
      await store.append({ kind: 'turn/begin', turnId: 't1', seq: 1, at: 1, session: 's', subjectId: 'u', generation: 1, owner: 'root' })
      await store.close()
      process.emitWarning('the host’s own experiment', 'ExperimentalWarning')
      process.emitWarning('SQLite is an experimental feature, says the host', 'Warning')
      console.log(store.driver)
    `)
    expect(stderr).not.toMatch(/ExperimentalWarning: SQLite is an experimental feature/)
    expect(stderr).toContain('ExperimentalWarning: the host’s own experiment')
    expect(stderr).toContain('Warning: SQLite is an experimental feature, says the host')
  })

  it('where neither node:sqlite nor better-sqlite3 is at hand, says exactly what to install', async () => {
    // The shipped code, copied where no node_modules holds better-sqlite3, on a Node with
    // node:sqlite hidden (as on Node 20, which has none).
    const copy = join(tempDir(), 'dist')
    cpSync(dist, copy, { recursive: true })
    const hide = `const get = process.getBuiltinModule; process.getBuiltinModule = (id) => (id === 'node:sqlite' ? undefined : get(id))`
    const { stdout } = await node(
      `
      const { sqliteJournal } = await import(${JSON.stringify(pathToFileURL(join(copy, 'runtime/journal/sqlite.js')).href)})
      const errors = []
      for (const options of [{}, { driver: 'node' }, { driver: 'better-sqlite3' }]) {
        try {
          sqliteJournal(${JSON.stringify(join(tempDir(), 'journal.db'))}, options)
          errors.push('opened')
        } catch (error) {
          errors.push({ code: error.code, message: error.message })
        }
      }
      console.log(JSON.stringify(errors))
    `,
      ['--import', `data:text/javascript,${encodeURIComponent(hide)}`],
    )
    const [auto, node22, better] = JSON.parse(stdout) as { code: string; message: string }[]
    expect(auto).toEqual({
      code: 'JOURNAL_UNAVAILABLE',
      message: `The SQLite journal needs better-sqlite3 on this Node.js (${process.version}), which has no node:sqlite: install it with \`${INSTALL_BETTER_SQLITE3}\`.`,
    })
    expect(INSTALL_BETTER_SQLITE3).toBe('npm install better-sqlite3@12')
    expect(node22?.code).toBe('JOURNAL_UNAVAILABLE')
    expect(node22?.message).toContain("sqliteJournal({ driver: 'node' }) needs node:sqlite")
    expect(better).toEqual({
      code: 'JOURNAL_UNAVAILABLE',
      message: "sqliteJournal({ driver: 'better-sqlite3' }) needs better-sqlite3, which is not installed: `npm install better-sqlite3@12`.",
    })
  })
})

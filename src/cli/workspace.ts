import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { JournalStore } from '../seams/journal.js'
import { CliError } from './errors.js'

/** The plugin folder an argument names, resolved against `cwd`; it must be a directory. */
export function pluginDir(cwd: string, dir: string | undefined): string {
  const resolved = path.resolve(cwd, dir ?? '.')
  if (!existsSync(resolved) || !statSync(resolved).isDirectory()) {
    throw new CliError(`no plugin folder at ${resolved}`, 'pass a folder holding tools/, agent/skills/ or plugin.ts')
  }
  return resolved
}

/** `<dir>/.seam/journal.db`: where `seam dev`, `seam call` and `seam mcp` journal. */
export function journalPath(dir: string): string {
  return path.join(dir, '.seam', 'journal.db')
}

/** Opens (creating when needed) the folder's SQLite journal; `.seam/` gets a `.gitignore`. */
export async function openJournal(dir: string): Promise<JournalStore> {
  const { sqliteJournal } = await import('../runtime/journal/sqlite.js')
  const folder = path.dirname(journalPath(dir))
  if (!existsSync(folder)) {
    await mkdir(folder, { recursive: true })
    await writeFile(path.join(folder, '.gitignore'), '*\n')
  }
  return sqliteJournal(journalPath(dir))
}

/** Opens an existing journal for reading; a missing one is an error, never created. */
export async function openExistingJournal(dir: string): Promise<JournalStore> {
  const file = journalPath(dir)
  if (!existsSync(file)) {
    throw new CliError(`no journal at ${file}`, 'run `seam dev` or `seam call` in that folder first')
  }
  const { sqliteJournal } = await import('../runtime/journal/sqlite.js')
  return sqliteJournal(file)
}

/**
 * Opens the journal `--journal` names: a `postgres://` (or `postgresql://`) URL, whose `schema`
 * query parameter picks the schema (default `public`), or a SQLite file that must exist (relative
 * to `cwd`), never created.
 */
export async function openNamedJournal(cwd: string, named: string): Promise<JournalStore> {
  if (/^postgres(ql)?:\/\//i.test(named)) {
    const { postgresJournal } = await import('../runtime/journal/postgres.js')
    const url = new URL(named)
    const schema = url.searchParams.get('schema') ?? undefined
    url.searchParams.delete('schema')
    return postgresJournal(url.href, schema === undefined ? {} : { schema })
  }
  const file = path.resolve(cwd, named)
  if (!existsSync(file)) throw new CliError(`no journal at ${file}`, 'pass a SQLite journal file (.seam/journal.db) or a postgres:// URL')
  const { sqliteJournal } = await import('../runtime/journal/sqlite.js')
  return sqliteJournal(file)
}

let version: string | undefined

/** This package's version, from its package.json. */
export function runtimeVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  return version
}

/** The runtime, loaded when a command needs it, so usage errors and `--help` start fast. */
export function loadRuntime(): Promise<typeof import('../index.js')> {
  return import('../index.js')
}

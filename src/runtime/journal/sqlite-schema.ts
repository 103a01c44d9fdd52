import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { SeamError } from '../../errors.js'
import { openSqlite, type SqliteDatabase, type SqliteDriver, sqliteErrorCode } from './sqlite-driver.js'

/** `PRAGMA application_id` of a seam-runtime journal ("SEAM"): marks the file as ours. */
const APPLICATION_ID = 0x5345_414d
const SCHEMA_VERSION = 4

// Events point at a turn number, not the turn id: the numbers of turns in flight are neighbours,
// so a commit touches a few index pages instead of one page per (random) turn id, several times
// less work per event.
const CREATE_SCHEMA = `
  CREATE TABLE seam_journal_turns (
    no INTEGER PRIMARY KEY,
    turn_id TEXT NOT NULL UNIQUE
  ) STRICT;
  CREATE TABLE seam_journal_events (
    id INTEGER PRIMARY KEY,
    turn INTEGER NOT NULL REFERENCES seam_journal_turns (no),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    call_id TEXT,
    at INTEGER NOT NULL,
    host TEXT,
    payload TEXT NOT NULL
  ) STRICT;
  CREATE UNIQUE INDEX seam_journal_turn_seq ON seam_journal_events (turn, seq);
  CREATE UNIQUE INDEX seam_journal_call_kind ON seam_journal_events (turn, call_id, kind) WHERE call_id IS NOT NULL;
  CREATE UNIQUE INDEX seam_journal_turn_kind ON seam_journal_events (turn, kind) WHERE call_id IS NULL;
  PRAGMA application_id = ${APPLICATION_ID};
`

/**
 * Version 3: a host's lease is held by one epoch (the store that registered it) until another host
 * fences it (`fenced_at`); every write of a store holding a lease checks both in its own statement.
 */
const FENCING = `
  ALTER TABLE seam_journal_hosts ADD COLUMN epoch INTEGER;
  ALTER TABLE seam_journal_hosts ADD COLUMN fenced_at INTEGER;
`

/**
 * Version 4: the OAuth records of mounted MCP servers (`McpToolService({ auth })`), one JSON
 * document per server; credentials, so never in the events.
 */
const OAUTH = `
  CREATE TABLE IF NOT EXISTS seam_journal_oauth (
    key TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    at INTEGER NOT NULL
  ) STRICT;
`

/** Version 2: the coordination tables (parked calls, idempotency keys, session grants, heartbeats). */
const CREATE_COORDINATION = `
  CREATE TABLE seam_journal_parked (
    token TEXT PRIMARY KEY,
    turn_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    session TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    asked_at INTEGER NOT NULL,
    call TEXT NOT NULL,
    decision TEXT,
    settled TEXT
  ) STRICT;
  CREATE UNIQUE INDEX seam_journal_parked_round ON seam_journal_parked (turn_id, call_id, round);
  CREATE INDEX seam_journal_parked_waiting ON seam_journal_parked (asked_at) WHERE settled IS NULL;
  CREATE TABLE seam_journal_keys (
    key TEXT PRIMARY KEY,
    turn_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    host TEXT NOT NULL,
    at INTEGER NOT NULL,
    result TEXT
  ) STRICT;
  CREATE TABLE seam_journal_grants (
    session TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    source TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (session, subject_id, source, fingerprint)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE seam_journal_hosts (
    host TEXT PRIMARY KEY,
    beat_at INTEGER NOT NULL,
    lease_ms INTEGER NOT NULL
  ) STRICT;
  ${FENCING}
  ${OAUTH}
  PRAGMA user_version = ${SCHEMA_VERSION};
`

/**
 * Opens (or creates, with its parent folders) the journal database at the absolute `path`. A file
 * that is not SQLite, or a SQLite database that is not a journal, is refused with `JOURNAL_CORRUPT`
 * and left untouched: it may be someone's data, so it is never recreated.
 */
export function openJournalDatabase(path: string, synchronous: 'FULL' | 'NORMAL', driver?: SqliteDriver): SqliteDatabase {
  mkdirSync(dirname(path), { recursive: true })
  const db = openSqlite(path, { driver })
  try {
    // A transaction, so two processes creating the same new file agree on who creates the schema.
    db.transaction(() => ensureSchema(db, path), 'immediate')()
    // Only now, once the file is known to be ours: switching to WAL rewrites the header.
    db.exec('PRAGMA journal_mode = WAL')
    db.exec(`PRAGMA synchronous = ${synchronous}`)
    return db
  } catch (error) {
    db.close()
    throw journalFault(error, path)
  }
}

function ensureSchema(db: SqliteDatabase, path: string): void {
  const applicationId = db.prepare('PRAGMA application_id', { pluck: true }).get() as number
  const version = db.prepare('PRAGMA user_version', { pluck: true }).get() as number
  if (applicationId === APPLICATION_ID) {
    if (version === SCHEMA_VERSION) return
    // Version 1 had the events only: add the coordination tables, keep every event.
    if (version === 1) return void db.exec(CREATE_COORDINATION)
    // Version 2 had leases without epochs: add them (leases written before have none, so are never held).
    if (version === 2) return void db.exec(`${FENCING} ${OAUTH} PRAGMA user_version = ${SCHEMA_VERSION};`)
    // Version 3 had no OAuth table.
    if (version === 3) return void db.exec(`${OAUTH} PRAGMA user_version = ${SCHEMA_VERSION};`)
    throw corrupt(path, `${path} is a seam-runtime journal of schema version ${version}; this build reads version ${SCHEMA_VERSION}.`)
  }
  const objects = db.prepare('SELECT count(*) FROM sqlite_schema', { pluck: true }).get() as number
  if (applicationId !== 0 || version !== 0 || objects > 0) {
    throw corrupt(path, `${path} is a SQLite database but not a seam-runtime journal (it has no journal marker).`)
  }
  db.exec(CREATE_SCHEMA)
  db.exec(CREATE_COORDINATION)
}

function corrupt(path: string, message: string, cause?: unknown): SeamError {
  return new SeamError('JOURNAL_CORRUPT', message, {
    cause,
    details: { file: path },
    hint: 'Point the journal at another file, or move this one aside; it is left as it is.',
  })
}

/** SQLite's corruption errors as `JOURNAL_CORRUPT` naming the file; anything else unchanged. */
export function journalFault(error: unknown, path: string): unknown {
  if (SeamError.is(error)) return error
  const code = sqliteErrorCode(error)
  if (code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT')) {
    return corrupt(path, `${path} is not a readable seam-runtime journal: ${(error as Error).message}.`, error)
  }
  return error
}

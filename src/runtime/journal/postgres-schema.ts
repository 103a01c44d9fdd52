import type { Pool } from 'pg'
import { SeamError } from '../../errors.js'
import { turnIndexesSql } from './postgres-turns.js'

const SCHEMA_VERSION = 4

/** `name` as a PostgreSQL identifier, quoted so any schema name is taken literally. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

function createSchema(schema: string, createNamespace: boolean): string {
  const q = quoteIdent(schema)
  return `
    ${createNamespace ? `CREATE SCHEMA ${q};` : ''}
    CREATE TABLE ${q}.seam_journal_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      turn_id text NOT NULL,
      seq integer NOT NULL,
      kind text NOT NULL,
      call_id text,
      at bigint NOT NULL,
      host text NOT NULL,
      payload json NOT NULL
    );
    CREATE UNIQUE INDEX seam_journal_turn_seq ON ${q}.seam_journal_events (turn_id, seq);
    CREATE UNIQUE INDEX seam_journal_call_kind ON ${q}.seam_journal_events (turn_id, call_id, kind) WHERE call_id IS NOT NULL;
    CREATE UNIQUE INDEX seam_journal_turn_kind ON ${q}.seam_journal_events (turn_id, kind) WHERE call_id IS NULL;
    CREATE TABLE ${q}.seam_journal_meta (version integer NOT NULL);
    INSERT INTO ${q}.seam_journal_meta (version) VALUES (${SCHEMA_VERSION});
    ${createCoordination(q)}
  `
}

/** Version 2: the coordination tables (parked calls, idempotency keys, session grants, heartbeats). */
function createCoordination(q: string): string {
  return `
    CREATE TABLE ${q}.seam_journal_parked (
      token text PRIMARY KEY,
      turn_id text NOT NULL,
      call_id text NOT NULL,
      round integer NOT NULL,
      session text NOT NULL,
      subject_id text NOT NULL,
      asked_at bigint NOT NULL,
      call json NOT NULL,
      decision json,
      settled json
    );
    CREATE UNIQUE INDEX seam_journal_parked_round ON ${q}.seam_journal_parked (turn_id, call_id, round);
    CREATE INDEX seam_journal_parked_waiting ON ${q}.seam_journal_parked (asked_at) WHERE settled IS NULL;
    CREATE TABLE ${q}.seam_journal_keys (
      key text PRIMARY KEY,
      turn_id text NOT NULL,
      call_id text NOT NULL,
      host text NOT NULL,
      at bigint NOT NULL,
      result json
    );
    CREATE TABLE ${q}.seam_journal_grants (
      session text NOT NULL,
      subject_id text NOT NULL,
      source text NOT NULL,
      fingerprint text NOT NULL,
      at bigint NOT NULL,
      PRIMARY KEY (session, subject_id, source, fingerprint)
    );
    CREATE TABLE ${q}.seam_journal_hosts (
      host text PRIMARY KEY,
      beat_at bigint NOT NULL,
      lease_ms integer NOT NULL
    );
    ${addFencing(q)}
    ${createOAuth(q)}
  `
}

/**
 * Version 4: the OAuth records of mounted MCP servers (`McpToolService({ auth })`), one JSON
 * document per server; credentials, so never in the events.
 */
function createOAuth(q: string): string {
  return `CREATE TABLE IF NOT EXISTS ${q}.seam_journal_oauth (key text PRIMARY KEY, record json NOT NULL, at bigint NOT NULL);`
}

/**
 * Version 3: a host's lease is held by one epoch (the store that registered it) until another host
 * fences it (`fenced_at`); every write of a store holding a lease checks both in its own statement.
 */
function addFencing(q: string): string {
  return `ALTER TABLE ${q}.seam_journal_hosts ADD COLUMN epoch bigint, ADD COLUMN fenced_at bigint;`
}

/**
 * Creates the journal tables in `schema` unless they exist, under an advisory lock so hosts starting
 * together do not race. A `seam_journal_events` table without the journal's version marker belongs to
 * something else and is refused with `JOURNAL_CORRUPT`, as is a marker of another version.
 */
export async function ensurePostgresSchema(pool: Pool, schema: string, location: string): Promise<void> {
  const q = quoteIdent(schema)
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`seam-runtime journal ${schema}`])
    const { rows } = await client.query<{ namespace: boolean; events: boolean; meta: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS namespace,
        to_regclass($2) IS NOT NULL AS events, to_regclass($3) IS NOT NULL AS meta`,
      [schema, `${q}.seam_journal_events`, `${q}.seam_journal_meta`],
    )
    const found = rows[0]!
    if (found.meta) {
      const version = (await client.query<{ version: number }>(`SELECT version FROM ${q}.seam_journal_meta`)).rows[0]?.version
      if (version === 1) {
        // Version 1 had the events only: add the coordination tables, keep every event.
        await client.query(`${createCoordination(q)} UPDATE ${q}.seam_journal_meta SET version = ${SCHEMA_VERSION};`)
      } else if (version === 2) {
        // Version 2 had leases without epochs: add them (leases written before have none, so are never held).
        await client.query(`${addFencing(q)} ${createOAuth(q)} UPDATE ${q}.seam_journal_meta SET version = ${SCHEMA_VERSION};`)
      } else if (version === 3) {
        // Version 3 had no OAuth table.
        await client.query(`${createOAuth(q)} UPDATE ${q}.seam_journal_meta SET version = ${SCHEMA_VERSION};`)
      } else if (version !== SCHEMA_VERSION) {
        throw corrupt(location, schema, `holds a seam-runtime journal of schema version ${version}; this build reads ${SCHEMA_VERSION}`)
      }
    } else if (found.events) {
      throw corrupt(location, schema, 'has a seam_journal_events table without the journal marker (seam_journal_meta)')
    } else {
      await client.query(createSchema(schema, !found.namespace))
    }
    await client.query(turnIndexesSql(`${q}.seam_journal_events`))
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

function corrupt(location: string, schema: string, what: string): SeamError {
  return new SeamError('JOURNAL_CORRUPT', `Schema ${quoteIdent(schema)} at ${location} ${what}.`, {
    details: { location, schema },
    hint: 'Give the journal its own schema (options.schema); the existing tables are left as they are.',
  })
}

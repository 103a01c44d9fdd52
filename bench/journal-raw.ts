/**
 * The raw drivers writing a call's two events as a hand-written journal would, the floor
 * `bench/journal.ts` measures the SQLite journal against: a minimal table (the event's columns, one
 * unique index on `(turn_id, seq)`), the payload as JSON text, `synchronous=FULL`, WAL. `commitEach`
 * commits every INSERT by itself; `groupCommit` commits the INSERTs that arrive in one turn of the
 * event loop in one transaction, as the journal's group commit does. No `run()`: not a benchmark.
 */
import { openSqlite, type SqliteDriver, type SqliteValue } from '../src/runtime/journal/sqlite-driver.js'

/** What a lane of `bench/journal.ts` calls: one call's `tool/call` and `tool/result`, each durable before the next. */
export interface CallWriter {
  call(turnId: string, seq: number, callId: string): Promise<void>
  close(): void | Promise<void>
}

const CONTENT = [{ type: 'text', text: 'Ticket 42: printer on fire, status open.' }]

/** The two events of one call, as the runtime writes them. */
export function callEvents(turnId: string, seq: number, callId: string): [Record<string, unknown>, Record<string, unknown>] {
  const at = Date.now()
  return [
    { kind: 'tool/call', turnId, seq, at, callId, name: 'lookup_ticket', arguments: '{"id":42}', generation: 1 },
    { kind: 'tool/result', turnId, seq: seq + 1, at, callId, status: 'completed', content: CONTENT, durationMs: 1 },
  ]
}

function open(path: string, driver: SqliteDriver) {
  const db = openSqlite(path, { driver })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = FULL')
  db.exec(`CREATE TABLE events (id INTEGER PRIMARY KEY, turn_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    call_id TEXT, at INTEGER NOT NULL, payload TEXT NOT NULL) STRICT;
    CREATE UNIQUE INDEX events_turn_seq ON events (turn_id, seq)`)
  const insert = db.prepare('INSERT INTO events (turn_id, seq, kind, call_id, at, payload) VALUES (?, ?, ?, ?, ?, ?)')
  const write = (event: Record<string, unknown>) => {
    insert.run(event.turnId as SqliteValue, event.seq as SqliteValue, event.kind as SqliteValue, event.callId as SqliteValue, event.at as SqliteValue, JSON.stringify(event))
  }
  return { db, write }
}

/** One autocommitted INSERT per event. */
export function commitEach(path: string, driver: SqliteDriver): CallWriter {
  const { db, write } = open(path, driver)
  return {
    async call(turnId, seq, callId) {
      const [call, result] = callEvents(turnId, seq, callId)
      write(call)
      await undefined
      write(result)
    },
    close: () => db.close(),
  }
}

/** The INSERTs that arrive before the next turn of the event loop, in one transaction. */
export function groupCommit(path: string, driver: SqliteDriver): CallWriter {
  const { db, write } = open(path, driver)
  let queue: { event: Record<string, unknown>; resolve: () => void }[] = []
  const commit = db.transaction((events: readonly { event: Record<string, unknown> }[]) => {
    for (const { event } of events) write(event)
  })
  const flush = () => {
    const batch = queue
    queue = []
    commit(batch)
    for (const { resolve } of batch) resolve()
  }
  const push = (event: Record<string, unknown>) =>
    new Promise<void>((resolve) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ event, resolve })
    })
  return {
    async call(turnId, seq, callId) {
      const [call, result] = callEvents(turnId, seq, callId)
      await push(call)
      await push(result)
    },
    close: () => db.close(),
  }
}

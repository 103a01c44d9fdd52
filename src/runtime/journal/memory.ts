import { SeamError } from '../../errors.js'
import { APPENDED, callIdOf, checkEvent, closedError, duplicateError } from './events.js'
import { knowsSecrets } from '../base/redact.js'
import { defaultHostId, type Owner, ownerGoneTest } from './hosts.js'
import { type PrivacyOptions, payloadLimit, protectEvent, scrubEvent } from '../base/privacy.js'
import { MemoryCoordination } from './memory-coordination.js'
import { countRepaired, type OpenCall, ownersAfterParking, planRepair, withReservedSeqs } from './repair.js'
import { countTurnCalls, encodeCursor, eventMatches, planTurnQuery, summarizeTurn } from './turn-query.js'
import { addCall, bitsOf, callIndex, emptyTurnLog, freezeEvent, holdsSeq, insertBySeq, KIND_BIT, keptWhole, kindBit, sizeOf, type TurnLog } from './turn-log.js'
import type {
  JournalEvent,
  JournalStore,
  RepairOptions,
  RepairReport,
  TurnPage,
  TurnQuery,
  TurnSummary,
} from '../../seams/journal.js'

export interface MemoryJournalOptions extends PrivacyOptions {
  /** Asked before each append; an error it returns rejects that append, as a journal that is down would. */
  readonly failWith?: (event: JournalEvent) => Error | undefined
  /**
   * Stamped on every event, as the durable stores do. Without it an event keeps the `host` it was
   * appended with, so a test can play several writers on one memory journal.
   */
  readonly hostId?: string
  /**
   * Turns kept (default 1,000). Past it, or past `maxBytes`, the turns that are over (ended, no call
   * waiting for its result) are dropped, oldest first; a live turn is never dropped.
   */
  readonly maxTurns?: number
  /** About how many bytes of events are kept (default 16 MiB; an estimate from payload lengths). */
  readonly maxBytes?: number
}

export const DEFAULT_MEMORY_MAX_TURNS = 1_000
export const DEFAULT_MEMORY_MAX_BYTES = 16 * 1024 * 1024

/**
 * The in-memory journal, with a switch for tests that need a journal that is down. Unlike the
 * durable stores it still answers `read` and `tail` once closed, so a test can look at what a
 * closed root journaled.
 */
export interface MemoryJournal extends JournalStore {
  /** While `false`, every append rejects (reads keep working, so a test can look at what was kept). */
  setAvailable(available: boolean): void
}

/**
 * A journal held in memory: for tests, development and throwaway runs; production hosts use
 * `sqliteJournal` or `postgresJournal`. Same contract as the durable stores for the turns it holds;
 * it holds at most `maxTurns` turns and about `maxBytes`, dropping turns that are over oldest first,
 * so a host that runs for days on it stays flat. A dropped turn reads as empty and no longer holds
 * its ids: its uniqueness rules hold while it is kept, and always while it is live.
 */
export function memoryJournal(options: MemoryJournalOptions = {}): MemoryJournal {
  return new MemoryJournalStore(options)
}

/**
 * A memory journal's append in the caller's step, for the pipeline's `tool/call` (see
 * `journalCall`): `true` once the event is stored, `false` when the turn already holds that call's
 * (or the turn's) event of that kind and nothing was stored; it throws where `append` would reject.
 * The pipeline claims a call's id through it, by the store's own uniqueness rule, instead of in a
 * set of the turn's ids beside it: in a turn of thousands of calls, each table costs a lookup that
 * misses the processor's cache. `undefined` for any other store, and for a memory journal whose
 * `append` was replaced (wrapped or stubbed by a host or a test): its writes go through that (a
 * turn looks when it begins). With `frozen`, the caller vouches that the event's content blocks and
 * their array are frozen (the pipeline's `tool/result`, whose outcome holds them): they are kept as
 * they are, not frozen again. The events are the pipeline's own, well formed by construction (their
 * turn's id was checked with its `turn/begin`, the call's id by `execute`, seqs and times are the
 * runtime's): they are not checked again, as every event `append` is given is.
 */
export function appendNowOf(store: JournalStore): AppendNow | undefined {
  return MemoryJournalStore.appendNowOf(store)
}

class MemoryJournalStore implements MemoryJournal {
  readonly kind = 'memory'
  readonly location = 'memory'
  readonly #maxPayload: number
  readonly #maxTurns: number
  readonly #maxBytes: number
  readonly #failWith: ((event: JournalEvent) => Error | undefined) | undefined
  readonly #host: string | undefined
  readonly #turns = new Map<string, TurnLog>()
  #begunTurns = 0
  /** Turns that are over, in the order they became so: the next to drop comes first. */
  readonly #over = new Map<string, TurnLog>()
  #bytes = 0
  /** Events appended so far: each one's place in the store's append order (see `TurnLog.orders`). */
  #appended = 0
  #available = true
  #closed = false
  /** The turn of the last append: a turn's events come one after another, so most appends skip the map. */
  #last: TurnLog | undefined
  #lastTurnId: string | undefined
  readonly coordination: MemoryCoordination

  constructor(options: MemoryJournalOptions) {
    this.#maxPayload = payloadLimit(options)
    this.#maxTurns = bound(options.maxTurns, DEFAULT_MEMORY_MAX_TURNS, 'maxTurns')
    this.#maxBytes = bound(options.maxBytes, DEFAULT_MEMORY_MAX_BYTES, 'maxBytes')
    this.#failWith = options.failWith
    this.#host = options.hostId
    this.coordination = new MemoryCoordination(options.hostId ?? defaultHostId(), this.location, () => {
      if (this.#closed) throw closedError(this.location)
      if (!this.#available) throw new Error('The memory journal is unavailable (setAvailable(false)).')
    })
  }

  setAvailable(available: boolean): void {
    this.#available = available
  }

  /** Not `async`: an append that succeeds hands back one shared settled promise, allocating none. */
  append(event: JournalEvent): Promise<void> {
    try {
      if (this.#appendNow(event)) return APPENDED
      throw duplicateError({ ...event, callId: callIdOf(event) ?? null }, this.location)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** See `appendNowOf`. */
  static appendNowOf(store: JournalStore): AppendNow | undefined {
    if (!(store instanceof MemoryJournalStore) || store.append !== MemoryJournalStore.prototype.append) return undefined
    return (event, frozen) => store.#appendNow(event, frozen === true, true)
  }

  #appendNow(event: JournalEvent, frozen = false, wellFormed = false): boolean {
    if (this.#closed) throw closedError(this.location)
    if (!wellFormed) checkEvent(event)
    if (!this.#available) throw new Error('The memory journal is unavailable (setAvailable(false)).')
    const failure = this.#failWith?.(event)
    if (failure !== undefined) throw failure
    const stored = this.#insert(event, frozen)
    if (stored === SEQ_HELD) throw duplicateError({ ...event, callId: callIdOf(event) ?? null }, this.location)
    return stored === STORED
  }

  async read(turnId: string): Promise<JournalEvent[]> {
    const log = this.#turns.get(turnId)
    return log === undefined ? [] : this.#readable(log).slice()
  }

  /**
   * The `limit` latest events, oldest first. Turns are visited latest append first, and only until
   * the events picked are all newer than anything the next turn holds: a tail of the live turn
   * reads that turn alone, whatever else is kept.
   */
  async tail(limit: number): Promise<JournalEvent[]> {
    if (!(limit >= 1)) return []
    const logs = [...this.#turns.values()].sort((a, b) => b.lastOrder - a.lastOrder)
    const newestFirst = (a: { order: number }, b: { order: number }) => b.order - a.order
    // Newest first and cut to `limit` once it holds that many (then `picked[limit - 1]` is the oldest kept).
    const picked: { order: number; event: JournalEvent }[] = []
    for (const log of logs) {
      if (picked.length >= limit && picked[limit - 1]!.order > log.lastOrder) break
      const events = this.#readable(log)
      // A turn in append order gives its last `limit` events; another is looked at whole.
      const from = log.inOrder ? Math.max(0, events.length - limit) : 0
      for (let index = from; index < events.length; index += 1) picked.push({ order: log.orders[index]!, event: events[index]! })
      if (picked.length >= limit) {
        picked.sort(newestFirst)
        picked.length = limit
      }
    }
    if (picked.length < limit) picked.sort(newestFirst)
    return picked.reverse().map((entry) => entry.event)
  }

  /** See `JournalStore.turns`. Memory journals are small and bounded, so this one scans. */
  async turns(query?: TurnQuery): Promise<TurnPage> {
    const { limit, before, filters } = planTurnQuery(query)
    const begun = [...this.#turns.values()]
      .filter((log) => log.begun !== undefined && (before === undefined || log.begun < before))
      .sort((a, b) => b.begun! - a.begun!)
    const page: TurnSummary[] = []
    for (const log of begun) {
      if (!filters.every(([name, value]) => log.events.some((event) => eventMatches(event, name, value)))) continue
      if (page.length === limit) return { turns: page, next: encodeCursor(this.#turns.get(page.at(-1)!.turnId)!.begun!) }
      const begin = log.events.find((event) => event.kind === 'turn/begin')!
      const end = log.events.find((event) => event.kind === 'turn/end')
      page.push(summarizeTurn(begin, end, countTurnCalls(log.events)))
    }
    return { turns: page }
  }

  /** See `JournalStore.repair`; this store's own host is its `hostId`, if it has one. */
  async repair(options: RepairOptions = {}): Promise<RepairReport> {
    if (this.#closed) throw closedError(this.location)
    // The shared stores' order: hosts past their lease are fenced before what they left open is read.
    const now = Date.now()
    this.coordination.fenceExpired(now)
    const test = ownerGoneTest(this.#host, options.hosts, this.coordination.beats(), now)
    // Every writer of a memory journal is this process, so an event without a host is one of its
    // own, still live (another root sharing the journal): only `hosts: 'all'` closes those.
    const gone = (owner: Owner) => (owner.host === undefined || owner.host === null ? options.hosts === 'all' : test(owner))
    const unsettled: (OpenCall & Owner)[] = []
    const openTurns: string[] = []
    const maxSeq = new Map<string, number>()
    for (const [turnId, log] of this.#turns) {
      const open = (log.turnKinds & KIND_BIT['turn/end']) === 0
      for (const event of log.events) {
        if (event.kind === 'tool/call' && (bitsOf(log, event.callId) & KIND_BIT['tool/result']) === 0) {
          unsettled.push({ turnId, callId: event.callId, host: event.host, at: event.at })
        } else if (event.kind === 'turn/begin' && open && gone(event)) {
          openTurns.push(turnId)
        }
      }
      maxSeq.set(turnId, log.events.at(-1)?.seq ?? 0)
    }
    const parked = this.coordination.roundsOf(new Set(unsettled.map((call) => call.turnId).concat(openTurns)))
    const openCalls = ownersAfterParking(unsettled, parked)
      .filter(gone)
      .map(({ turnId, callId, seq }) => ({ turnId, callId, seq }))
    const planned = planRepair({ openCalls, openTurns, maxSeq: withReservedSeqs(maxSeq, parked), at: Date.now() })
    return countRepaired(planned.filter((event) => this.#insert(event) === STORED))
  }

  async close(): Promise<void> {
    this.#closed = true
  }

  /**
   * The turn's events as a reader may see them: those appended since the last read are redacted
   * now (`protectEvent`), once, in place. Appends only scrub known secret values (`scrubEvent`):
   * redacting by shape costs a regular expression scan of every payload, a tenth of a call, and
   * what a memory journal holds is read rarely, mostly never. Nothing reads `events` but through
   * here, but `repair` and `turns`, which look at no payload.
   */
  #readable(log: TurnLog): JournalEvent[] {
    const { events } = log
    for (let index = log.readableTo; index < events.length; index += 1) {
      const event = events[index]!
      const safe = protectEvent(event, this.#maxPayload)
      if (safe !== event) events[index] = freezeEvent(safe)
    }
    log.readableTo = events.length
    return events
  }

  /**
   * Stores the event frozen (`STORED`), unless the turn holds its kind for its call (or the turn
   * event) or its seq already (`KIND_HELD`, `SEQ_HELD`). Runs on every append: keep it lean.
   * Events come in many shapes, so each property read here is a megamorphic lookup: the fields are
   * read once.
   */
  #insert(event: JournalEvent, frozen = false): Inserted {
    const { turnId, kind, seq } = event
    let log = turnId === this.#lastTurnId ? this.#last : this.#turns.get(turnId)
    if (log === undefined || log.evicted) {
      log = emptyTurnLog()
      this.#turns.set(turnId, log)
    }
    this.#last = log
    this.#lastTurnId = turnId
    const bit = kindBit(kind)
    const callId = callIdOf(event)
    let index = -1
    let held: number
    if (callId === undefined) held = log.turnKinds
    else {
      index = callIndex(log, callId)
      held = index === -1 ? 0 : log.bits[index]!
    }
    if ((held & bit) !== 0) return KIND_HELD
    if (seq <= log.lastSeq && holdsSeq(log, seq)) return SEQ_HELD
    // Redacted by shape when read (see `#readable`), unless a payload is too large to keep whole.
    // With no secret value known and every payload within bounds (the size estimate bounds each),
    // there is nothing to scrub or cut: the event is kept as given, with no second look at it.
    const given = sizeOf(event)
    const safe = !knowsSecrets() && keptWhole(given, this.#maxPayload) ? event : (scrubEvent(event, this.#maxPayload) ?? protectEvent(event, this.#maxPayload))
    // Content the caller vouched for is kept as it is, unless scrubbing or a cut replaced it.
    const stored = freezeEvent(this.#host === undefined ? safe : { ...safe, host: this.#host }, frozen && safe === event)
    if (callId === undefined) log.turnKinds |= bit
    else {
      if (index === -1) index = addCall(log, callId)
      log.bits[index] = held | bit
      log.lastCall = callId
      log.lastIndex = index
    }
    if (kind === 'turn/begin') log.begun = ++this.#begunTurns
    const order = ++this.#appended
    log.lastOrder = order
    if (seq > log.lastSeq) {
      log.lastSeq = seq
      // Stores at the end, not `push`: the optimizing compiler knows nothing of a field's array, so
      // `push` stays a call into the builtin; a store after reading `length` is inlined.
      const { events, orders } = log
      events[events.length] = stored
      orders[orders.length] = order
    } else {
      insertBySeq(log, stored, order)
    }
    const bytes = safe === event ? given : sizeOf(stored)
    log.bytes += bytes
    this.#bytes += bytes
    if (kind === 'tool/call') log.open += 1
    else if (kind === 'tool/result' && (held & KIND_BIT['tool/call']) !== 0) log.open -= 1
    this.#track(turnId, log)
    if (this.#turns.size > this.#maxTurns || this.#bytes > this.#maxBytes) this.#evict()
    return STORED
  }

  /** A turn is over once it has ended (or never began) and no call of it waits for its result. */
  #track(turnId: string, log: TurnLog): void {
    const live = ((log.turnKinds & KIND_BIT['turn/begin']) !== 0 && (log.turnKinds & KIND_BIT['turn/end']) === 0) || log.open > 0
    // Only a change touches the map: a live turn's appends (nearly all of them) cost no lookup.
    if (live === !log.over) return
    log.over = !live
    if (live) this.#over.delete(turnId)
    else this.#over.set(turnId, log)
  }

  /** Drops turns that are over, oldest first, until both bounds hold or only live turns are left. */
  #evict(): void {
    for (const [turnId, log] of this.#over) {
      if (this.#turns.size <= this.#maxTurns && this.#bytes <= this.#maxBytes) break
      this.#over.delete(turnId)
      this.#turns.delete(turnId)
      this.#bytes -= log.bytes
      log.evicted = true
    }
  }
}

/** See `appendNowOf`. */
export type AppendNow = (event: JournalEvent, frozen?: boolean) => boolean

/** What `#insert` made of an event. */
type Inserted = typeof STORED | typeof KIND_HELD | typeof SEQ_HELD
const STORED = 0
const KIND_HELD = 1
const SEQ_HELD = 2

function bound(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) throw new SeamError('INVALID_OPTIONS', `memoryJournal: ${name} must be a positive integer, got ${String(value)}`)
  return value
}

/**
 * One turn as the memory journal holds it (`TurnLog`): its events in seq order, their append order
 * for `tail`, the kind bits its uniqueness rules check, and its size for the bounds; with the helpers
 * that read and update it.
 */
import type { ContentBlock, JournalEvent } from '../../seams/journal.js'

/** One bit per kind: what a turn (or one call of it) already holds. */
export const KIND_BIT: Readonly<Record<JournalEvent['kind'], number>> = {
  'turn/begin': 1,
  'turn/end': 2,
  'tool/call': 1,
  'approval/asked': 2,
  'approval/decided': 4,
  'tool/result': 8,
  'question/asked': 16,
  'question/answered': 32,
}

/** `KIND_BIT[kind]` as a switch: a keyed lookup with a different key on each append goes megamorphic. */
export function kindBit(kind: JournalEvent['kind']): number {
  switch (kind) {
    case 'tool/call':
      return 1
    case 'tool/result':
      return 8
    case 'approval/asked':
      return 2
    case 'approval/decided':
      return 4
    case 'turn/begin':
      return 1
    case 'turn/end':
      return 2
    case 'question/asked':
      return 16
    case 'question/answered':
      return 32
  }
}

export interface TurnLog {
  /**
   * In seq order. Those from `readableTo` on are kept as appended, with known secret values scrubbed
   * but not yet redacted by shape (see the store's `#readable`).
   */
  readonly events: JournalEvent[]
  /** `events` before this index are redacted as a reader may see them. */
  readableTo: number
  /**
   * When each of `events` was appended (the store's append count then): `tail`'s order across
   * turns. Numbers, not the events again in one list for the whole store: an array of small
   * integers is never scanned by the garbage collector, nor written through its barrier.
   */
  readonly orders: number[]
  /** The latest of `orders`. */
  lastOrder: number
  /** `events` are in append order too (no event came before a later seq of its turn). */
  inOrder: boolean
  /** Kind bits of the turn events. */
  turnKinds: number
  /** Kind bits of each call, by its place among the turn's calls (see `table`). */
  readonly bits: number[]
  /** Each call's id, by its place among the turn's calls. */
  readonly ids: string[]
  /**
   * Each call's place, found by a hash of its id (see `callIndex`), but for the turn's first call
   * while it is the only one (most turns make few calls): open addressing, slot `s` holding the
   * id's hash in `table[2s]`, its place plus one in `table[2s + 1]` and a tag of its hash in
   * `tags[s]` (0: an empty slot). A `Map` keyed by the ids costs a lookup of a new id three reads
   * that miss the processor's cache in a turn of thousands of calls (the bucket, the entry, the key
   * string it compares with), as a call allocates enough to push them out between two calls. A new
   * id here reads only `tags`, a byte a slot (8 KB for 4,000 calls), which stays in the cache; the
   * table, and the id it compares with, are read only when a tag matches. A call's later events
   * update `bits` in place, and those that follow one another skip the table (`lastCall`).
   */
  table: Int32Array | undefined
  tags: Uint8Array | undefined
  /** The call of the turn's latest call event, and its place in `bits`. */
  lastCall: string | undefined
  lastIndex: number
  /** The id `callIndex` last missed, its hash, and the empty slot it stopped at: where `addCall` puts it. */
  missed: string | undefined
  missedHash: number
  missedSlot: number
  /** The highest seq held; a later seq needs no search (the common case). */
  lastSeq: number
  /** Its place among begun turns (from 1, in the order their `turn/begin` came); `turns` pages by it. */
  begun: number | undefined
  /** Calls with a `tool/call` and no `tool/result` yet. */
  open: number
  /** The estimated size of `events`. */
  bytes: number
  /** Dropped by the bound (the store's cached log of its last append may still be this one). */
  evicted: boolean
  /** Listed in the store's turns that are over (see the store's `#track`). */
  over: boolean
}

/** A rough per-event overhead (object, fields, ids, frozen), so many small events count too. */
const EVENT_BYTES = 200

/** The log of a turn that holds nothing yet. */
export function emptyTurnLog(): TurnLog {
  return { events: [], readableTo: 0, orders: [], lastOrder: 0, inOrder: true, turnKinds: 0, bits: [], ids: [], table: undefined, tags: undefined, lastCall: undefined, lastIndex: -1, missed: undefined, missedHash: 0, missedSlot: -1, lastSeq: 0, begun: undefined, open: 0, bytes: 0, evicted: false, over: false }
}

/** Where `log` keeps `callId`'s kind bits (see `TurnLog.table`): `-1` for a call it has not seen. */
export function callIndex(log: TurnLog, callId: string): number {
  if (callId === log.lastCall) return log.lastIndex
  const { table, tags } = log
  // Only the first call is kept, outside the table: it is `lastCall`, or there is none.
  if (table === undefined || tags === undefined) return -1
  const hash = callHash(callId)
  const tag = tagOf(hash)
  const mask = tags.length - 1
  for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
    const seen = tags[slot]!
    if (seen === 0) {
      log.missed = callId
      log.missedHash = hash
      log.missedSlot = slot
      return -1
    }
    if (seen === tag && table[2 * slot] === hash) {
      const place = table[2 * slot + 1]! - 1
      if (log.ids[place] === callId) return place
    }
  }
}

/** The kind bits `log` holds for `callId`. */
export function bitsOf(log: TurnLog, callId: string): number {
  const index = callIndex(log, callId)
  return index === -1 ? 0 : log.bits[index]!
}

/**
 * Enters a call `log` has not seen (`callIndex` gave `-1`), with no bits yet; returns its place.
 * The caller has just looked it up, so the slot it goes into is known.
 */
export function addCall(log: TurnLog, callId: string): number {
  const { bits, ids } = log
  const index = bits.length
  // Stores at the end rather than `push`, which stays a builtin call here (see the store's insert).
  bits[index] = 0
  ids[index] = callId
  if (index === 0) return index
  // Half full at most, so a miss ends within a few slots.
  if (log.tags === undefined || 2 * (index + 1) > log.tags.length) grow(log)
  const table = log.table!
  const tags = log.tags!
  if (log.missed === callId) {
    // Just looked up and missed: its hash and slot are known.
    put(table, tags, log.missedSlot, log.missedHash, index)
  } else {
    const hash = callHash(callId)
    put(table, tags, emptySlot(tags, hash), hash, index)
  }
  log.missed = undefined
  return index
}

/**
 * Gives `log` tables twice the size (16 slots at first) holding its calls but the newest, which
 * `addCall` puts in; a slot `callIndex` remembered is forgotten.
 */
function grow(log: TurnLog): void {
  const { table, tags } = log
  const slots = tags === undefined ? 16 : 2 * tags.length
  const nextTable = new Int32Array(2 * slots)
  const nextTags = new Uint8Array(slots)
  if (table === undefined || tags === undefined) {
    const hash = callHash(log.ids[0]!)
    put(nextTable, nextTags, emptySlot(nextTags, hash), hash, 0)
  } else {
    // The old table in slot order: its hashes are kept, so no id is read (or hashed) again.
    for (let slot = 0; slot < tags.length; slot += 1) {
      if (tags[slot] === 0) continue
      const hash = table[2 * slot]!
      put(nextTable, nextTags, emptySlot(nextTags, hash), hash, table[2 * slot + 1]! - 1)
    }
  }
  log.table = nextTable
  log.tags = nextTags
  log.missed = undefined
}

function put(table: Int32Array, tags: Uint8Array, slot: number, hash: number, place: number): void {
  tags[slot] = tagOf(hash)
  table[2 * slot] = hash
  table[2 * slot + 1] = place + 1
}

/** The first empty slot from `hash`'s own. */
function emptySlot(tags: Uint8Array, hash: number): number {
  const mask = tags.length - 1
  let slot = hash & mask
  while (tags[slot] !== 0) slot = (slot + 1) & mask
  return slot
}

/** A slot's tag: never 0 (empty), and from bits of the hash other than those that pick the slot. */
function tagOf(hash: number): number {
  return 0x80 | (hash >>> 25)
}

/** FNV-1a over the id's UTF-16 units: ids are short, and those of one turn usually differ at the end. */
export function callHash(id: string): number {
  let hash = 0x811c9dc5
  for (let index = 0; index < id.length; index += 1) hash = Math.imul(hash ^ id.charCodeAt(index), 0x01000193)
  return hash
}

/**
 * Whether every payload of an event whose `sizeOf` is `bytes` fits in `maxPayload` UTF-8 bytes:
 * the estimate counts each payload's UTF-16 units (at most 3 bytes each) above its overhead.
 */
export function keptWhole(bytes: number, maxPayload: number): boolean {
  return 3 * (bytes - EVENT_BYTES) <= maxPayload
}

/** An estimate of what `event` holds in memory: a fixed overhead plus its payload strings. */
export function sizeOf(event: JournalEvent): number {
  switch (event.kind) {
    case 'tool/call':
      return EVENT_BYTES + event.arguments.length + event.name.length
    case 'approval/asked':
      return EVENT_BYTES + event.summary.length + event.reason.length
    case 'question/asked':
      return EVENT_BYTES + event.message.length + event.schema.length
    case 'question/answered':
      return EVENT_BYTES + (event.content?.length ?? 0)
    case 'tool/result': {
      let bytes = EVENT_BYTES
      for (let index = 0; index < event.content.length; index += 1) {
        const block = event.content[index]!
        bytes += 64 + payloadLength(block)
      }
      return bytes
    }
    default:
      return EVENT_BYTES
  }
}

/**
 * Frozen, so neither the caller nor a reader can change what was journaled. An event the runtime
 * handed over is frozen in place (it keeps no other use for it); content blocks too, unless
 * `contentFrozen` (the caller froze them, see `appendNowOf`).
 */
export function freezeEvent(event: JournalEvent, contentFrozen = false): JournalEvent {
  if (event.kind === 'tool/result' && !contentFrozen) {
    // Each block too, even in a frozen array: freezing is idempotent and cheap.
    // An index loop: `for…of` makes an iterator per append.
    const content = event.content
    for (let index = 0; index < content.length; index += 1) Object.freeze(content[index])
    Object.freeze(content)
  }
  // Freezing is idempotent, and a check first would cost as much as the freeze it skips.
  return Object.freeze(event)
}

/**
 * Whether `log` holds an event at `seq`. A loop, not `events.some` with a closure: a closure over
 * `seq` in the store's insert can make every insert allocate a context for it, used or not.
 */
export function holdsSeq(log: TurnLog, seq: number): boolean {
  const { events } = log
  for (let index = events.length - 1; index >= 0; index -= 1) if (events[index]!.seq === seq) return true
  return false
}

/**
 * Places an event that came before a later seq of its turn (events almost always arrive in seq
 * order, and are pushed): by a scan from the end. The turn's events are no longer in append order.
 */
export function insertBySeq(log: TurnLog, event: JournalEvent, order: number): void {
  const { events } = log
  let index = events.length
  while (index > 0 && events[index - 1]!.seq > event.seq) index -= 1
  events.splice(index, 0, event)
  log.orders.splice(index, 0, order)
  // The events after it moved up one place; those read before are redacted again (it changes nothing).
  log.readableTo = Math.min(log.readableTo, index)
  log.inOrder = false
}

function payloadLength(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
      return block.text.length
    case 'image':
    case 'audio':
      return block.data.length
    case 'resource':
      return block.resource.uri.length + ('text' in block.resource ? block.resource.text.length : block.resource.blob.length)
    default:
      return block.uri.length + block.name.length + (block.description?.length ?? 0)
  }
}

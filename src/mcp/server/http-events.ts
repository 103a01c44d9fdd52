import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server'

/** At most this many events are kept per session; the oldest go first. */
const MAX_EVENTS = 1_000

/**
 * The event store of one 2025-11-25 HTTP session (in this process's memory): every SSE event the
 * session's streams send is kept, so a client whose stream closed and that reconnects with
 * `Last-Event-ID` gets what it missed. The SDK's transport then sends each POST stream a priming
 * event first (an id and empty data, with `retry`). Bounded: the last `MAX_EVENTS` events, so a
 * client that comes back after more than that finds its place gone and misses events.
 */
export class SessionEventStore implements EventStore {
  readonly #events = new Map<EventId, { stream: StreamId; message: JSONRPCMessage }>()
  readonly #onReplay: () => void
  #count = 0

  /** `onReplay`: called when a client resumes a stream (it is back: its calls are not cancelled). */
  constructor(onReplay: () => void = () => {}) {
    this.#onReplay = onReplay
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    this.#count += 1
    // Stream ids are the SDK's UUIDs, so the event id says which stream it belongs to as well.
    const id = `${streamId}.${this.#count}`
    this.#events.set(id, { stream: streamId, message })
    if (this.#events.size > MAX_EVENTS) this.#events.delete(this.#events.keys().next().value as EventId)
    return id
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.#events.get(eventId)?.stream
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const last = this.#events.get(lastEventId)
    if (last === undefined) throw new Error('the event to resume after is not kept (unknown, or too old)')
    this.#onReplay()
    let after = false
    for (const [id, event] of this.#events) {
      if (id === lastEventId) {
        after = true
        continue
      }
      // The priming event (an empty message) only marks a place: nothing to deliver.
      if (after && event.stream === last.stream && Object.keys(event.message).length > 0) await send(id, event.message)
    }
    return last.stream
  }
}

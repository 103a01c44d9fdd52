import type { ServerResponse } from 'node:http'
import { scrubValues } from '../runtime/base/redact.js'
import type { JournalStore } from '../seams/journal.js'
import type { LiveEvent } from './types.js'

/** How often the journal is checked for events written by anyone (`seam call` in another process too). */
const JOURNAL_POLL_MS = 200
/** Events looked at per check: every turn written to since the last check is named, up to this many events. */
const TAIL = 64
/** A comment now and then keeps proxies and idle timeouts from closing a quiet stream. */
const HEARTBEAT_MS = 15_000

/**
 * The console's Server-Sent Events stream: generations, approvals and journal activity, pushed to
 * every open page. The journal is watched by asking for its last events while a page is open, since
 * other processes (`seam call`, other hosts) append to the same journal without telling this one;
 * one `journal` event names every turn written to since the last look.
 *
 * A page learns nothing it missed: it reloads what it shows when the stream opens. So the stream
 * opens (its headers are sent) only once the journal's position is known, and every change is
 * either in that reload or in an event after it.
 */
export class LiveEvents {
  readonly #journal: JournalStore
  readonly #clients = new Set<ServerResponse>()
  #timer: NodeJS.Timeout | undefined
  #heartbeat: NodeJS.Timeout | undefined
  #last: string | undefined
  #polling = false
  /** The first look at the journal since the stream started: where it is, before any page hears `open`. */
  #ready: Promise<void> | undefined

  constructor(journal: JournalStore) {
    this.#journal = journal
  }

  /** Pages with the stream open. */
  get clients(): number {
    return this.#clients.size
  }

  async attach(res: ServerResponse): Promise<void> {
    await this.#start()
    if (res.destroyed) return
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
    res.write(': seam console\n\n')
    this.#clients.add(res)
    res.on('close', () => {
      this.#clients.delete(res)
      if (this.#clients.size === 0) this.#stop()
    })
    // The last page closed while this one waited for the first look: watch again.
    if (this.#timer === undefined) void this.#start()
  }

  send(event: LiveEvent): void {
    const frame = `data: ${scrubValues(JSON.stringify(event))}\n\n`
    for (const client of this.#clients) client.write(frame)
  }

  close(): void {
    this.#stop()
    for (const client of this.#clients) client.end()
    this.#clients.clear()
  }

  #start(): Promise<void> {
    if (this.#ready !== undefined) return this.#ready
    this.#timer = setInterval(() => void this.#poll(), JOURNAL_POLL_MS)
    this.#heartbeat = setInterval(() => {
      for (const client of this.#clients) client.write(': ping\n\n')
    }, HEARTBEAT_MS)
    this.#timer.unref()
    this.#heartbeat.unref()
    this.#ready = this.#poll()
    return this.#ready
  }

  #stop(): void {
    clearInterval(this.#timer)
    clearInterval(this.#heartbeat)
    this.#timer = undefined
    this.#heartbeat = undefined
    this.#ready = undefined
    // Unwatched, the position goes stale: the next page's stream starts from a fresh look.
    this.#last = undefined
  }

  async #poll(): Promise<void> {
    if (this.#polling) return
    this.#polling = true
    try {
      const events = await this.#journal.tail(TAIL)
      const keys = events.map((event) => `${event.turnId}\u0000${event.seq}`)
      const key = keys.at(-1) ?? ''
      const previous = this.#last
      this.#last = key
      // The first look only learns where the journal is.
      const last = events.at(-1)
      if (previous === undefined || key === previous || last === undefined) return
      // Every turn written to since the last look (all of the tail when that look is out of it),
      // so an open turn hears its own new call even when another turn wrote after it.
      const from = keys.lastIndexOf(previous) + 1
      const turns = [...new Set(events.slice(from).map((event) => event.turnId))]
      this.send({ type: 'journal', turnId: last.turnId, turns })
    } catch {
      // A journal that is closing or briefly unreadable: the next tick asks again.
    } finally {
      this.#polling = false
    }
  }
}

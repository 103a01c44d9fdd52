import type { ServerResponse } from 'node:http'
import { scrubValues } from '../runtime/base/redact.js'
import type { JournalStore } from '../seams/journal.js'
import type { LiveEvent } from './types.js'

/** How often the journal is checked for events written by anyone (`seam call` in another process too). */
const JOURNAL_POLL_MS = 200
/** A comment now and then keeps proxies and idle timeouts from closing a quiet stream. */
const HEARTBEAT_MS = 15_000

/**
 * The console's Server-Sent Events stream: generations, approvals and journal activity, pushed to
 * every open page. The journal is watched by asking for its last event while a page is open, since
 * other processes (`seam call`, other hosts) append to the same journal without telling this one.
 */
export class LiveEvents {
  readonly #journal: JournalStore
  readonly #clients = new Set<ServerResponse>()
  #timer: NodeJS.Timeout | undefined
  #heartbeat: NodeJS.Timeout | undefined
  #last: string | undefined
  #polling = false

  constructor(journal: JournalStore) {
    this.#journal = journal
  }

  /** Pages with the stream open. */
  get clients(): number {
    return this.#clients.size
  }

  attach(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
    res.write(': seam console\n\n')
    this.#clients.add(res)
    res.on('close', () => {
      this.#clients.delete(res)
      if (this.#clients.size === 0) this.#stop()
    })
    this.#start()
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

  #start(): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => void this.#poll(), JOURNAL_POLL_MS)
    this.#heartbeat = setInterval(() => {
      for (const client of this.#clients) client.write(': ping\n\n')
    }, HEARTBEAT_MS)
    this.#timer.unref()
    this.#heartbeat.unref()
  }

  #stop(): void {
    clearInterval(this.#timer)
    clearInterval(this.#heartbeat)
    this.#timer = undefined
    this.#heartbeat = undefined
  }

  async #poll(): Promise<void> {
    if (this.#polling) return
    this.#polling = true
    try {
      const [last] = await this.#journal.tail(1)
      const key = last === undefined ? '' : `${last.turnId}\u0000${last.seq}`
      // The first look only learns where the journal is.
      if (this.#last !== undefined && key !== this.#last && last !== undefined) this.send({ type: 'journal', turnId: last.turnId })
      this.#last = key
    } catch {
      // A journal that is closing or briefly unreadable: the next tick asks again.
    } finally {
      this.#polling = false
    }
  }
}

import type { JournalStore } from '../../seams/journal.js'

export interface HostLeaseOptions {
  readonly journal: JournalStore
  /** How long after its last heartbeat this host counts as dead to the others. */
  readonly leaseMs: number
  /** Runs on every beat after the heartbeat: crash repair, and expiry of parked calls. */
  readonly tick: () => Promise<unknown>
  readonly onError: (error: unknown) => void
}

/**
 * This process's presence on a shared journal. The rule:
 * - it writes a heartbeat when it starts and then every third of its lease, so a live host is
 *   never older than its lease even when one beat is late;
 * - after each beat it runs `tick` (crash repair, which closes what hosts past their lease left
 *   open, each call once by the journal's unique keys; and the parked calls' expiry); ticks never
 *   overlap, and a failed one is reported and retried on the next beat;
 * - on close it stops and retires its heartbeat: a host that stopped cleanly left nothing open.
 * The timer is unref'd: a lease never keeps a process alive.
 */
export class HostLease {
  readonly #options: HostLeaseOptions
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #closed = false

  constructor(options: HostLeaseOptions) {
    this.#options = options
  }

  /** The first heartbeat; the caller runs its own start-up repair after it. */
  async start(): Promise<void> {
    const { journal, leaseMs } = this.#options
    await journal.coordination.heartbeat(journal.coordination.host, leaseMs)
    this.#timer = setInterval(() => this.#beat(), Math.max(1, Math.floor(leaseMs / 3)))
    this.#timer.unref()
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#timer)
    await this.#running
    const { coordination } = this.#options.journal
    await coordination.retire(coordination.host).catch(() => undefined)
  }

  #beat(): void {
    if (this.#running !== undefined || this.#closed) return
    const { journal, leaseMs, tick, onError } = this.#options
    this.#running = (async () => {
      try {
        await journal.coordination.heartbeat(journal.coordination.host, leaseMs)
        if (!this.#closed) await tick()
      } catch (error) {
        if (!this.#closed) onError(error)
      } finally {
        this.#running = undefined
      }
    })()
  }
}

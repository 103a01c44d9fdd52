import { performance } from 'node:perf_hooks'

/** The longest delay a Node timer takes (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 0x7fff_ffff

/** Something due at a `performance.now()` time. */
export interface Due {
  readonly due: number
  fire(): void
}

/**
 * One timer for every running body's deadline and grace period, armed for the earliest. A timer
 * per call costs a timer-list insert and removal on every call; here a call only joins and leaves
 * a set. The timer keeps the process alive only while something is due (ref'd while non-empty).
 */
class DeadlineQueue {
  readonly #entries = new Set<Due>()
  #timer: NodeJS.Timeout | undefined
  #armedFor = Number.POSITIVE_INFINITY

  add(entry: Due): void {
    this.#entries.add(entry)
    if (entry.due < this.#armedFor) this.#arm(entry.due)
    else if (this.#entries.size === 1) this.#timer?.ref()
  }

  delete(entry: Due): void {
    if (this.#entries.delete(entry) && this.#entries.size === 0) this.#timer?.unref()
  }

  #arm(due: number): void {
    clearTimeout(this.#timer)
    this.#armedFor = due
    // Capped: an entry due later than a timer can wait is re-armed when this one fires.
    this.#timer = setTimeout(this.#fire, Math.min(MAX_TIMER_MS, Math.max(0, due - performance.now())))
  }

  readonly #fire = (): void => {
    this.#timer = undefined
    this.#armedFor = Number.POSITIVE_INFINITY
    const now = performance.now()
    let next = Number.POSITIVE_INFINITY
    for (const entry of this.#entries) {
      if (entry.due <= now) {
        this.#entries.delete(entry)
        entry.fire()
      } else if (entry.due < next) {
        next = entry.due
      }
    }
    // An entry added by a `fire()` above was visited by the loop too, so `next` covers it.
    if (next !== Number.POSITIVE_INFINITY) this.#arm(Math.min(next, this.#armedFor))
  }
}

export const deadlines = new DeadlineQueue()

/**
 * How a body run learns of aborts and joins the deadline queue without paying for it on every call:
 * listeners shared per caller signal, and arming deferred to the end of the event-loop turn.
 */

/** A run that can be told its caller's signal aborted. */
export interface Listener {
  abortFrom(signal: AbortSignal): void
}

/** A run that starts listening (and joins the deadline queue) when armed; a finished one is skipped. */
export interface Armable {
  readonly finished: boolean
  arm(): void
}

/**
 * The runs listening to one shared caller signal (a turn's, a batch's, a wrapper's). One `abort`
 * listener per signal fans out to its runs in flight, instead of one listener per run; it is
 * removed when the last run leaves, so a signal (`AbortSignal.any` keeps a composite signal that has
 * listeners alive as long as its sources) is not held past its runs.
 */
const listeners = new WeakMap<AbortSignal, { runs: Set<Listener>; onAbort: () => void }>()

export function watch(signal: AbortSignal, run: Listener): void {
  let entry = listeners.get(signal)
  if (!entry) {
    const runs = new Set<Listener>()
    const onAbort = () => {
      listeners.delete(signal)
      for (const r of [...runs]) r.abortFrom(signal)
      runs.clear()
    }
    entry = { runs, onAbort }
    listeners.set(signal, entry)
    signal.addEventListener('abort', onAbort, { once: true })
  }
  entry.runs.add(run)
}

export function unwatch(signal: AbortSignal, run: Listener): void {
  const entry = listeners.get(signal)
  if (!entry?.runs.delete(run) || entry.runs.size > 0) return
  listeners.delete(signal)
  signal.removeEventListener('abort', entry.onAbort)
}

/**
 * Runs started in this event-loop turn, armed together at its end (one `setImmediate` for all of
 * them). Runs that finished meanwhile are skipped, and dropped early when many pile up (calls
 * awaited one after another never leave the microtask queue).
 */
const COMPACT_AT = 64

class ArmingQueue {
  /**
   * The runs deferred, in `#runs[0 … #count)`. Written in place, never shortened: compacting to a
   * shorter length would shrink the array's storage, and the pushes after it would grow it again.
   */
  #runs: (Armable | undefined)[] = []
  #count = 0
  #scheduled = false
  #compactAt = COMPACT_AT

  defer(run: Armable): void {
    const runs = this.#runs
    if (this.#count < runs.length) runs[this.#count] = run
    else runs.push(run)
    this.#count += 1
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flush)
    } else if (this.#count >= this.#compactAt) {
      // Compacted in place: calls awaited one after another get here every 64 calls. Many runs
      // still going (a large batch) raise the mark, so compacting stays amortised O(1) per run.
      let kept = 0
      for (let index = 0; index < this.#count; index += 1) if (!runs[index]!.finished) runs[kept++] = runs[index]!
      // The finished runs are let go of (the slots stay for the next runs).
      for (let index = kept; index < this.#count; index += 1) runs[index] = undefined
      this.#count = kept
      this.#compactAt = Math.max(COMPACT_AT, kept * 2)
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    const runs = this.#runs
    const count = this.#count
    this.#runs = []
    this.#count = 0
    this.#compactAt = COMPACT_AT
    for (let index = 0; index < count; index += 1) runs[index]!.arm()
  }
}

export const arming = new ArmingQueue()

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
  #runs: Armable[] = []
  #scheduled = false
  #compactAt = COMPACT_AT

  defer(run: Armable): void {
    this.#runs.push(run)
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flush)
    } else if (this.#runs.length >= this.#compactAt) {
      // Compacted in place: calls awaited one after another get here every 64 calls. Many runs
      // still going (a large batch) raise the mark, so compacting stays amortised O(1) per run.
      const runs = this.#runs
      let kept = 0
      for (let index = 0; index < runs.length; index += 1) if (!runs[index]!.finished) runs[kept++] = runs[index]!
      runs.length = kept
      this.#compactAt = Math.max(COMPACT_AT, kept * 2)
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    const runs = this.#runs
    this.#runs = []
    this.#compactAt = COMPACT_AT
    for (const run of runs) run.arm()
  }
}

export const arming = new ArmingQueue()

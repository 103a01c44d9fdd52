import type { ProgressEvent } from '../seams/calls.js'
import type { ProgressView } from './types.js'

/** Calls whose last report is kept at most: the newest win (a page shows running calls, not history). */
const KEPT = 500

/**
 * The last progress report of each call this root ran, for a page that opens a turn while its
 * calls run (the stream gives it the reports that follow). Reports are not journaled, so a call
 * running on another host shows no bar here.
 */
export class RunningProgress {
  readonly #last = new Map<string, ProgressView>()

  heard(event: ProgressEvent): ProgressView {
    const view: ProgressView = {
      turnId: event.turnId,
      callId: event.callId,
      done: event.done,
      ...(event.total === undefined ? {} : { total: event.total }),
      ...(event.message === undefined ? {} : { message: event.message }),
      at: event.at,
    }
    const key = keyOf(event.turnId, event.callId)
    this.#last.delete(key)
    this.#last.set(key, view)
    for (const old of this.#last.keys()) {
      if (this.#last.size <= KEPT) break
      this.#last.delete(old)
    }
    return view
  }

  of(turnId: string, callId: string): ProgressView | undefined {
    return this.#last.get(keyOf(turnId, callId))
  }
}

function keyOf(turnId: string, callId: string): string {
  return `${turnId}\u0000${callId}`
}

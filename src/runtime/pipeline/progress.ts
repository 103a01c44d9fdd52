/**
 * A running call's progress reports (`ctx.progress()`), on their way to observers. The rules:
 * - a report is checked where it is made: `done` a finite number ≥ 0 that never goes down, `total`
 *   (when given) a finite number ≥ 0, `message` (when given) a string, cut to `MAX_MESSAGE`;
 * - the first report reaches observers at once, later ones at most once per `PROGRESS_INTERVAL_MS`
 *   (the latest of a burst wins), and one that reaches `total` at once;
 * - a report still held when the body settles is delivered before the call's outcome;
 * - a report after that is ignored, and nothing of it is journaled: progress is a live signal.
 */
import { performance } from 'node:perf_hooks'
import { SeamError } from '../../errors.js'
import type { ProgressEvent } from '../../seams/calls.js'
import type { ToolProgress } from '../../seams/types.js'
import type { CallState } from './state.js'

/** Reports closer together than this reach observers once: the latest of them. */
export const PROGRESS_INTERVAL_MS = 100
/** A progress line is a status line, not a payload. */
export const MAX_MESSAGE = 500

/** The checked, frozen copy of a report; throws `INVALID_PROGRESS` for a malformed one. */
export function checkProgress(input: unknown, previous: number): ToolProgress {
  if (input === null || typeof input !== 'object') throw invalid('takes an object { done, total?, message? }')
  const { done, total, message } = input as Record<string, unknown>
  if (typeof done !== 'number' || !Number.isFinite(done) || done < 0) throw invalid('`done` must be a finite number ≥ 0')
  if (done < previous) throw invalid(`\`done\` must not go down (it was ${previous}, now ${done})`)
  if (total !== undefined && (typeof total !== 'number' || !Number.isFinite(total) || total < 0)) throw invalid('`total` must be a finite number ≥ 0')
  if (message !== undefined && typeof message !== 'string') throw invalid('`message` must be a string')
  const line = message === undefined ? undefined : message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message
  return Object.freeze({ done, ...(total === undefined ? {} : { total }), ...(line === undefined ? {} : { message: line }) })
}

function invalid(why: string): SeamError {
  return new SeamError('INVALID_PROGRESS', `ctx.progress() ${why}`)
}

/** One call's reports: the last one delivered, the one held back, and the timer that delivers it. */
export class CallProgress {
  readonly #state: CallState
  #done = 0
  #sentAt = Number.NEGATIVE_INFINITY
  #held: ToolProgress | undefined
  #timer: NodeJS.Timeout | undefined

  constructor(state: CallState) {
    this.#state = state
  }

  /** The `done` of the last report (later ones may not be lower). */
  get done(): number {
    return this.#done
  }

  report(progress: ToolProgress): void {
    this.#done = progress.done
    const now = performance.now()
    const complete = progress.total !== undefined && progress.done >= progress.total
    if (complete || now - this.#sentAt >= PROGRESS_INTERVAL_MS) {
      this.#held = undefined
      clearTimeout(this.#timer)
      this.#timer = undefined
      this.#send(progress, now)
      return
    }
    this.#held = progress
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined
      this.flush()
    }, PROGRESS_INTERVAL_MS - (now - this.#sentAt))
  }

  /** Delivers a held report now (the body settled, or its interval passed). */
  flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const held = this.#held
    if (held === undefined) return
    this.#held = undefined
    this.#send(held, performance.now())
  }

  #send(progress: ToolProgress, now: number): void {
    this.#sentAt = now
    const state = this.#state
    const { turn, generation } = state.ctx
    const event: ProgressEvent = Object.freeze({
      callId: state.call.callId,
      name: state.call.name,
      turnId: turn.turnId,
      session: turn.session,
      generation: generation.number,
      at: Date.now(),
      ...progress,
    })
    // Observers are told in a fixed order; one that throws is its own problem.
    for (const listener of [state.onProgress, state.ctx.progress]) {
      if (listener === undefined) continue
      try {
        listener(event)
      } catch {
        // An observer cannot fail the call.
      }
    }
    state.probe?.progress?.(event)
  }
}

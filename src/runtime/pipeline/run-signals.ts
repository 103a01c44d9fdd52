/** What a body run holds beyond its own fields once it is aborted, armed, abandoned or wrapped. */
import type { Due } from '../base/deadlines.js'
import type { CallProgress } from './progress.js'

/** A run's deadline, then its grace period, in the shared deadline queue. */
export class RunTimer implements Due {
  constructor(
    readonly due: number,
    readonly fire: () => void,
  ) {}
}

/**
 * What a run holds only once it is aborted, armed, abandoned or wrapped: most runs settle before
 * any of that, and never allocate it (see `BodyRun.#more`).
 */
export class RunSignals {
  controller: AbortController | undefined = undefined
  /** Set once the body's signal is (or would be) aborted. */
  reason: { value: unknown } | undefined = undefined
  watched: AbortSignal[] | undefined = undefined
  own: AbortSignal | undefined = undefined
  onOwnAbort: (() => void) | undefined = undefined
  grace: RunTimer | undefined = undefined
  /** Ends the generation lease of an abandoned body (once it really settles). */
  release: (() => void) | undefined = undefined
  /** A wrapper's replacement for the dispatch signal. */
  substituted: AbortSignal | undefined = undefined
  /** The body's progress reports, once it made one. */
  progress: CallProgress | undefined = undefined
  /** How many questions the body asked. */
  questions = 0
  /** How many of them are open: the deadline waits meanwhile. */
  asking = 0
}

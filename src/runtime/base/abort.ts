import { performance } from 'node:perf_hooks'
import { type Armable, arming } from './arming.js'
import { type Due, deadlines } from './deadlines.js'

/**
 * The signal of a turn begun without one: nothing can abort it, so a call's own signal is used
 * alone instead of being fused with it (`AbortSignal.any` costs microseconds per call on Node 20).
 */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal

/** What `untilAborted` gives instead of the awaited value when the signal aborted first. */
export const ABORTED: unique symbol = Symbol('aborted')

/** What `untilDue` gives instead of the awaited value when its deadline passed first. */
export const TIMED_OUT: unique symbol = Symbol('timed out')

/**
 * `work`, or `ABORTED` as soon as `signal` aborts: whoever awaits host or remote code that may
 * never answer (a hook, a guard, a connection attempt) is not held once its caller has cancelled.
 * The work itself is left to finish; its answer is ignored, and so is its rejection (it is always
 * observed: a hook that rejects after the abort must not become an unhandled rejection).
 */
export function untilAborted<T>(work: PromiseLike<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  return race(work, signal, undefined) as Promise<T | typeof ABORTED>
}

/**
 * `untilAborted` with a deadline: `TIMED_OUT` once `timeoutMs` has passed without an answer. The
 * deadline joins the runtime's one deadline queue (no timer per wait); the abort still wins at once.
 */
export function untilDue<T>(work: PromiseLike<T>, signal: AbortSignal | undefined, timeoutMs: number): Promise<T | typeof ABORTED | typeof TIMED_OUT> {
  return race(work, signal, timeoutMs)
}

function race<T>(work: PromiseLike<T>, signal: AbortSignal | undefined, timeoutMs: number | undefined): Promise<T | typeof ABORTED | typeof TIMED_OUT> {
  const aborts = signal !== undefined && signal !== NEVER_ABORTED
  if (aborts && signal.aborted) {
    work.then(undefined, ignore)
    return Promise.resolve(ABORTED)
  }
  if (!aborts && timeoutMs === undefined) return Promise.resolve(work)
  return new Promise((resolve, reject) => {
    const wait = new Wait(resolve, reject, aborts ? signal : undefined, timeoutMs)
    // Settling a promise twice is a no-op: an answer after the abort or the deadline is dropped here.
    work.then(
      (value) => wait.answer(value),
      (error: unknown) => wait.fail(error),
    )
  })
}

/**
 * One bounded wait. Its deadline joins the deadline queue only if the work is still pending at the
 * end of the event-loop turn (`arming`): most waits (a journal write, a quick hook) settle within it
 * and never pay for a queue entry or a clock read. The deadline counts from that end of the turn
 * (a wait is never cut short; it may run over by what the turn took). Methods,
 * not arrow-function fields, and the wait itself as the abort listener (`handleEvent`): a closure
 * per wait would cost more than the wait.
 */
class Wait<T> implements Due, Armable {
  due = Number.POSITIVE_INFINITY
  finished = false
  readonly #timeoutMs: number
  #queued = false
  readonly #resolve: (value: T | typeof ABORTED | typeof TIMED_OUT) => void
  readonly #reject: (error: unknown) => void
  readonly #signal: AbortSignal | undefined

  constructor(
    resolve: (value: T | typeof ABORTED | typeof TIMED_OUT) => void,
    reject: (error: unknown) => void,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    this.#resolve = resolve
    this.#reject = reject
    this.#signal = signal
    this.#timeoutMs = timeoutMs ?? Number.POSITIVE_INFINITY
    signal?.addEventListener('abort', this, { once: true })
    if (timeoutMs !== undefined) arming.defer(this)
  }

  answer(value: T): void {
    if (this.#stop()) this.#resolve(value)
  }

  fail(error: unknown): void {
    if (this.#stop()) this.#reject(error)
  }

  arm(): void {
    if (this.finished) return
    this.due = performance.now() + this.#timeoutMs
    this.#queued = true
    deadlines.add(this)
  }

  /** The deadline passed (the deadline queue calls this, having removed the entry). */
  fire(): void {
    this.#queued = false
    if (this.#stop()) this.#resolve(TIMED_OUT)
  }

  /** The signal aborted. */
  handleEvent(): void {
    if (this.#stop()) this.#resolve(ABORTED)
  }

  #stop(): boolean {
    if (this.finished) return false
    this.finished = true
    this.#signal?.removeEventListener('abort', this)
    if (this.#queued) deadlines.delete(this)
    return true
  }
}

function ignore(): void {}

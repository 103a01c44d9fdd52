import { type Due, deadlines } from './pipeline/deadlines.js'
import { NEVER_ABORTED } from './turn-ingress.js'

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
    let entry: Due | undefined
    const stop = () => {
      if (aborts) signal.removeEventListener('abort', onAbort)
      if (entry) deadlines.delete(entry)
    }
    const onAbort = () => {
      stop()
      resolve(ABORTED)
    }
    if (aborts) signal.addEventListener('abort', onAbort, { once: true })
    if (timeoutMs !== undefined) {
      entry = {
        due: performance.now() + timeoutMs,
        fire: () => {
          stop()
          resolve(TIMED_OUT)
        },
      }
      deadlines.add(entry)
    }
    // Settling a promise twice is a no-op: an answer after the abort or the deadline is dropped here.
    work.then(
      (value) => {
        stop()
        resolve(value)
      },
      (error: unknown) => {
        stop()
        reject(error)
      },
    )
  })
}

function ignore(): void {}

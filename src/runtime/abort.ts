import { NEVER_ABORTED } from './turn-ingress.js'

/** What `untilAborted` gives instead of the awaited value when the signal aborted first. */
export const ABORTED: unique symbol = Symbol('aborted')

/**
 * `work`, or `ABORTED` as soon as `signal` aborts: whoever awaits host or remote code that may
 * never answer (a hook, a guard, a connection attempt) is not held once its caller has cancelled.
 * The work itself is left to finish; its answer is ignored.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  if (signal === undefined || signal === NEVER_ABORTED) return work
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const onAbort = () => resolve(ABORTED)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

import { Worker } from 'node:worker_threads'

/**
 * Runs in the worker: tests lines against the one regular expression it was started with and
 * answers with the indexes of the matching lines (at most `limit`).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const re = new RegExp(workerData.source, workerData.flags)
parentPort.on('message', ({ lines, limit }) => {
  const hits = []
  for (let i = 0; i < lines.length && hits.length < limit; i++) if (re.test(lines[i])) hits.push(i)
  parentPort.postMessage(hits)
})
`

/** A batch of lines took longer than the budget: the expression almost certainly backtracks catastrophically. */
export class RegexBudgetError extends Error {
  override readonly name = 'RegexBudgetError'
}

/**
 * Matches lines against an untrusted regular expression on a worker thread, each batch within a
 * time budget. JavaScript regular expressions backtrack: `(a+)+$` or `(a|aa)+$` on one long line
 * can run for minutes, and on the host's thread that would stall every turn. Here the worker is
 * terminated instead, and the call fails with a message the model can act on. One matcher per
 * search; `close()` ends its thread.
 */
export class IsolatedRegex {
  readonly budgetMs: number
  readonly #worker: Worker
  #pending: { resolve: (hits: number[]) => void; reject: (error: unknown) => void } | undefined
  #failure: unknown

  /** `source` and `flags` must already compile (check with `new RegExp` first, for a clear error). */
  constructor(source: string, flags: string, budgetMs: number) {
    this.budgetMs = budgetMs
    this.#worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { source, flags }, resourceLimits: { maxOldGenerationSizeMb: 256 } })
    // A search in flight is kept alive by its budget timer; an idle worker never holds the process.
    this.#worker.unref()
    this.#worker.on('message', (hits: number[]) => this.#settle(undefined, hits))
    this.#worker.on('error', (error) => this.#settle(error))
    this.#worker.on('exit', (code) => this.#settle(new Error(`the regular expression worker exited (code ${code})`)))
  }

  /** Indexes of the lines that match (at most `limit`), in order. Rejects past the budget or on abort. */
  match(lines: readonly string[], limit: number, signal?: AbortSignal): Promise<number[]> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    if (this.#pending) return Promise.reject(new Error('IsolatedRegex.match: one batch at a time'))
    signal?.throwIfAborted()
    return new Promise<number[]>((resolve, reject) => {
      const stop = (error: unknown) => {
        this.#settle(error)
        void this.#worker.terminate()
      }
      const timer = setTimeout(
        () => stop(new RegexBudgetError(`the regular expression ran for more than ${this.budgetMs} ms on ${lines.length} lines and was stopped`)),
        this.budgetMs,
      )
      const onAbort = () => stop(signal!.reason)
      signal?.addEventListener('abort', onAbort, { once: true })
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      this.#pending = {
        resolve: (hits) => {
          done()
          resolve(hits)
        },
        reject: (error) => {
          done()
          reject(error)
        },
      }
      this.#worker.postMessage({ lines, limit })
    })
  }

  close(): Promise<void> {
    return this.#worker.terminate().then(() => undefined)
  }

  #settle(error: unknown, hits?: number[]): void {
    const pending = this.#pending
    this.#pending = undefined
    if (error !== undefined) this.#failure ??= error
    if (!pending) return
    if (error === undefined) pending.resolve(hits!)
    else pending.reject(error)
  }
}

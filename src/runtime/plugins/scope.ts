import { SeamError, messageOf } from '../../errors.js'

interface Entry {
  readonly dispose: () => unknown
  readonly label: string
  done: boolean
}

/**
 * The one disposal primitive: every watcher, timer, socket, lease and registration is `add`ed here.
 * Disposers run once each, in reverse order; failures are aggregated into one `DISPOSE_FAILED`
 * error naming each label, after every disposer has had its turn.
 */
export class DisposableScope {
  readonly #entries: Entry[] = []
  #closing: Promise<void> | undefined

  get disposed(): boolean {
    return this.#closing !== undefined
  }

  /** Registers `dispose`; the returned disposer runs it early (once) and unregisters it. */
  add(dispose: () => unknown, label: string): () => void {
    if (this.#closing) {
      throw new SeamError('CLOSED', `cannot register "${label}": the scope is already disposed`)
    }
    const entry: Entry = { dispose, label, done: false }
    this.#entries.push(entry)
    return () => {
      if (entry.done) return
      entry.done = true
      const index = this.#entries.indexOf(entry)
      if (index >= 0) this.#entries.splice(index, 1)
      const result = dispose()
      if (result instanceof Promise) result.catch(() => {})
    }
  }

  /** Runs every disposer LIFO. Idempotent: later calls return the same promise. */
  dispose(): Promise<void> {
    this.#closing ??= this.#run()
    return this.#closing
  }

  async #run(): Promise<void> {
    const failures: { label: string; error: unknown }[] = []
    while (this.#entries.length > 0) {
      const entry = this.#entries.pop()!
      if (entry.done) continue
      entry.done = true
      try {
        // A synchronous disposer runs without a tick of its own: a plugin with 10,000 `addTool`s
        // would otherwise take 10,000 microtask turns to dispose, and a burst of reloads outpaces that.
        const result = entry.dispose()
        if (isThenable(result)) await result
      } catch (error) {
        failures.push({ label: entry.label, error })
      }
    }
    if (failures.length > 0) {
      const list = failures.map((f) => `${f.label}: ${messageOf(f.error)}`).join('; ')
      throw new SeamError('DISPOSE_FAILED', `${failures.length} disposer(s) failed: ${list}`, {
        cause: failures.length === 1 ? failures[0]!.error : new AggregateError(failures.map((f) => f.error)),
        details: { labels: failures.map((f) => f.label) },
      })
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

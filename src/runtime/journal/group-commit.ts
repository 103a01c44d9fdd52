/** Per item, the error that refused it, or `undefined` once it is committed. */
export type CommitBatch<T> = (items: readonly T[]) => readonly (Error | undefined)[]

interface Pending<T> {
  readonly item: T
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

/**
 * Group commit: items pushed before the scheduled commit runs share one `commit` call, so
 * concurrent writers share one transaction and one fsync. Each push settles with its own item's
 * outcome; if `commit` throws, each item of the batch is committed alone, so only the items that
 * fail on their own reject. `commit` is
 * synchronous (node:sqlite and better-sqlite3 both are), so nothing can be pushed while it runs: what arrives during a
 * commit's round of the event loop waits for the next one.
 */
export class GroupCommit<T> {
  readonly #commit: CommitBatch<T>
  #queue: Pending<T>[] = []
  #scheduled = false
  /** Hears the size of each batch committed together (instrumentation). */
  readonly listeners = new Set<(items: number) => void>()

  constructor(commit: CommitBatch<T>) {
    this.#commit = commit
  }

  push(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject })
      if (!this.#scheduled) {
        this.#scheduled = true
        // setImmediate, not a microtask: writers woken by the previous commit all get to push first.
        setImmediate(this.#run)
      }
    })
  }

  /** Commits everything queued now (before close or repair); the scheduled run then finds nothing. */
  flush(): void {
    const batch = this.#queue
    if (batch.length === 0) return
    this.#queue = []
    for (const listener of this.listeners) {
      try {
        listener(batch.length)
      } catch {
        // Instrumentation cannot fail a commit.
      }
    }
    let refused: readonly (Error | undefined)[]
    try {
      refused = this.#commit(batch.map((pending) => pending.item))
    } catch (error) {
      // One bad item rolls back the whole transaction: commit each on its own, so only it fails.
      if (batch.length === 1) batch[0]!.reject(error)
      else for (const pending of batch) this.#commitAlone(pending)
      return
    }
    batch.forEach((pending, index) => {
      const error = refused[index]
      if (error === undefined) pending.resolve()
      else pending.reject(error)
    })
  }

  #commitAlone(pending: Pending<T>): void {
    try {
      const [error] = this.#commit([pending.item])
      if (error === undefined) pending.resolve()
      else pending.reject(error)
    } catch (error) {
      pending.reject(error)
    }
  }

  readonly #run = (): void => {
    this.#scheduled = false
    this.flush()
  }
}

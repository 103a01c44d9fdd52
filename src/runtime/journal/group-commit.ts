/** Per item, the error that refused it, or `undefined` once it is committed. */
export type CommitBatch<T> = (items: readonly T[]) => readonly (Error | undefined)[]

/** `CommitBatch` over a database connection: one round trip per batch. */
export type CommitBatchAsync<T> = (items: readonly T[]) => Promise<readonly (Error | undefined)[]>

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
    heard(this.listeners, batch.length)
    let refused: readonly (Error | undefined)[]
    try {
      refused = this.#commit(batch.map((pending) => pending.item))
    } catch (error) {
      // One bad item rolls back the whole transaction: commit each on its own, so only it fails.
      if (batch.length === 1) batch[0]!.reject(error)
      else for (const pending of batch) this.#commitAlone(pending)
      return
    }
    settleEach(batch, refused)
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

/**
 * Group commit over a connection (PostgreSQL). The rule:
 * - an item pushed while no batch is in flight goes out on the next turn of the event loop, with
 *   everything pushed until then, as one batch (one `commit` call);
 * - items pushed while a batch is in flight queue, and go out together as the next batch once it
 *   returns: one batch in flight at a time, so items commit in push order;
 * - each push settles with its own item's outcome; when a batch's commit rejects with an error
 *   `splittable` says one item may have caused (a bad value), each item is committed alone, in
 *   order, so only the items that fail on their own reject; any other error (a lost connection)
 *   rejects exactly that batch's items.
 */
export class PipelinedGroupCommit<T> {
  readonly #commit: CommitBatchAsync<T>
  readonly #splittable: (error: unknown) => boolean
  #queue: Pending<T>[] = []
  /** A batch is in flight, or one is scheduled. */
  #busy = false
  /** Hears the size of each batch committed together (instrumentation). */
  readonly listeners = new Set<(items: number) => void>()

  constructor(commit: CommitBatchAsync<T>, splittable: (error: unknown) => boolean) {
    this.#commit = commit
    this.#splittable = splittable
  }

  push(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject })
      if (!this.#busy) {
        this.#busy = true
        // setImmediate, not a microtask: writers woken together all get to push first.
        setImmediate(this.#run)
      }
    })
  }

  readonly #run = (): void => {
    const batch = this.#queue
    if (batch.length === 0) {
      this.#busy = false
      return
    }
    this.#queue = []
    heard(this.listeners, batch.length)
    void this.#commitBatch(batch).then(this.#next)
  }

  /** After a batch: what writers woken by it push on this turn of the event loop joins the next one. */
  readonly #next = (): void => {
    setImmediate(this.#run)
  }

  async #commitBatch(batch: readonly Pending<T>[]): Promise<void> {
    try {
      settleEach(batch, await this.#commit(batch.map((pending) => pending.item)))
    } catch (error) {
      if (batch.length === 1 || !this.#splittable(error)) {
        for (const pending of batch) pending.reject(error)
        return
      }
      // One after another: push order holds for the items that commit.
      for (const pending of batch) await this.#commitAlone(pending)
    }
  }

  async #commitAlone(pending: Pending<T>): Promise<void> {
    try {
      const [error] = await this.#commit([pending.item])
      if (error === undefined) pending.resolve()
      else pending.reject(error)
    } catch (error) {
      pending.reject(error)
    }
  }
}

function heard(listeners: ReadonlySet<(items: number) => void>, items: number): void {
  for (const listener of listeners) {
    try {
      listener(items)
    } catch {
      // Instrumentation cannot fail a commit.
    }
  }
}

function settleEach<T>(batch: readonly Pending<T>[], refused: readonly (Error | undefined)[]): void {
  batch.forEach((pending, index) => {
    const error = refused[index]
    if (error === undefined) pending.resolve()
    else pending.reject(error)
  })
}

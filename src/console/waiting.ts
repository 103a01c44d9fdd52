/** A snapshot of what waits, with the version of the queue it belongs to (a page keeps the newest). */
export interface WaitingQueueView<View> {
  readonly version: number
  readonly pending: View[]
}

interface Entry<View, Answer> {
  readonly view: View
  readonly settle: (answer: Answer) => void
}

/**
 * What waits for a person on the console page (an approval, a tool's question, a server's sign-in):
 * each item waits until it is answered there, or withdrawn when its signal aborts (the call aborted,
 * timed out, or was answered at the terminal). Items live in this process only. The approval and
 * question ports ask only while a page is open (`available`, told by `watchedBy`), so nothing waits
 * unseen; a sign-in waits regardless (`seam dev` names the page to open at its terminal).
 */
export class WaitingQueue<View extends { readonly id: string }, Answer> {
  readonly #pending = new Map<string, Entry<View, Answer>>()
  readonly #listeners = new Set<(queue: WaitingQueueView<View>) => void>()
  #watched: () => boolean = () => false
  #version = 0

  /** Whether a page is open to show what waits. */
  get available(): boolean {
    return this.#watched()
  }

  /** Tells the queue how to know whether a page is open (the console's event stream has a client). */
  watchedBy(watched: () => boolean): void {
    this.#watched = watched
  }

  /** Waits for the answer to `view`; when `signal` aborts first, it settles `withdrawn` and leaves the page. */
  wait(view: View, signal: AbortSignal, withdrawn: Answer): Promise<Answer> {
    if (signal.aborted) return Promise.resolve(withdrawn)
    return new Promise<Answer>((resolve) => {
      const withdraw = () => this.settle(view.id, withdrawn)
      const settle = (answer: Answer) => {
        signal.removeEventListener('abort', withdraw)
        resolve(answer)
      }
      this.#pending.set(view.id, { view, settle })
      signal.addEventListener('abort', withdraw, { once: true })
      this.#changed()
    })
  }

  /** The item `id` while it waits. */
  get(id: string): View | undefined {
    return this.#pending.get(id)?.view
  }

  /** What waits, oldest first. */
  pending(): View[] {
    return [...this.#pending.values()].map((entry) => entry.view)
  }

  queue(): WaitingQueueView<View> {
    return { version: this.#version, pending: this.pending() }
  }

  /** Settles item `id` with `answer`; `false` when it no longer waits (answered elsewhere, or withdrawn). */
  settle(id: string, answer: Answer): boolean {
    const entry = this.#pending.get(id)
    if (entry === undefined) return false
    this.#pending.delete(id)
    entry.settle(answer)
    this.#changed()
    return true
  }

  /** Called with the whole queue on every change; returns a disposer. */
  onChange(listener: (queue: WaitingQueueView<View>) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #changed(): void {
    this.#version++
    const queue = this.queue()
    for (const listener of this.#listeners) {
      try {
        listener(queue)
      } catch {
        // A listener (an event stream that went away) cannot break what waits.
      }
    }
  }
}

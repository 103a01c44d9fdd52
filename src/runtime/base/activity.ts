/**
 * Work in flight, counted across every turn of a root: `root.close()` closes the journal only once
 * no call is running anywhere, also calls begun on a turn that had already ended.
 */
export class Activity {
  #count = 0
  #idle: { promise: Promise<void>; resolve: () => void } | undefined

  get count(): number {
    return this.#count
  }

  begin(): void {
    this.#count += 1
  }

  end(): void {
    this.#count -= 1
    if (this.#count === 0 && this.#idle) {
      this.#idle.resolve()
      this.#idle = undefined
    }
  }

  /**
   * Resolves when nothing is in flight, which something may have begun again by the time the caller
   * resumes: check `count` in the step that acts (`while (activity.count > 0) await activity.idle()`).
   */
  idle(): Promise<void> {
    if (this.#count === 0) return Promise.resolve()
    if (!this.#idle) {
      let resolve!: () => void
      const promise = new Promise<void>((r) => {
        resolve = r
      })
      this.#idle = { promise, resolve }
    }
    return this.#idle.promise
  }
}

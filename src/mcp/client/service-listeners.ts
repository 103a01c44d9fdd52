// The listeners of an `McpToolService`: those told, once per burst, that its tool set changed, and
// those told of every change of its connection status. A listener's failure is its own.

import type { ProviderStatus } from '../../seams/types.js'

/** Change notifications closer together than this reach listeners once. */
export const CHANGE_DEBOUNCE_MS = 20

export class ServiceListeners {
  readonly #listeners = new Set<() => void>()
  readonly #statusListeners = new Set<(status: ProviderStatus) => void>()
  #changeTimer: NodeJS.Timeout | undefined

  onDidChange(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  onStatusChange(listener: (status: ProviderStatus) => void): () => void {
    this.#statusListeners.add(listener)
    return () => {
      this.#statusListeners.delete(listener)
    }
  }

  /** Tells the change listeners once the burst is over; a notice already pending covers this change. */
  changed(): void {
    if (this.#changeTimer) return
    this.#changeTimer = setTimeout(() => {
      this.#changeTimer = undefined
      for (const listener of [...this.#listeners]) {
        try {
          listener()
        } catch {
          // A listener's failure is its own; the others still hear about the change.
        }
      }
    }, CHANGE_DEBOUNCE_MS).unref()
  }

  /** Tells the status listeners the status `current()` gives, asked only when there are any. */
  statusChanged(current: () => ProviderStatus): void {
    if (this.#statusListeners.size === 0) return
    const status = current()
    for (const listener of [...this.#statusListeners]) {
      try {
        listener(status)
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** Drops a notice still pending and the change listeners. */
  dispose(): void {
    clearTimeout(this.#changeTimer)
    this.#listeners.clear()
  }
}

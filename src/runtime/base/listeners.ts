// Listeners of typed events: `on` adds one and returns what removes it, `emit` tells every listener
// of the event. A listener that throws is passed over: it cannot break the emit or the others.

/** Listeners by event name, for the events `Events` maps (event name → payload). */
export class Listeners<Events> {
  readonly #listeners = new Map<keyof Events, Set<(event: never) => void>>()

  on<K extends keyof Events>(event: K, listener: (event: Events[K]) => void): () => void {
    let set = this.#listeners.get(event)
    if (!set) {
      set = new Set()
      this.#listeners.set(event, set)
    }
    set.add(listener as (event: never) => void)
    return () => set.delete(listener as (event: never) => void)
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    for (const listener of this.#listeners.get(event) ?? []) {
      try {
        ;(listener as (e: Events[K]) => void)(payload)
      } catch {
        // A listener cannot break a publish.
      }
    }
  }
}

import type { Diagnostic } from '../features/diagnostic.js'
import type { GenerationEvent, ReloadFailedEvent } from '../runtime/generation-store.js'
import type { DiagnosticView, TimelineEntry } from './types.js'

/** Entries kept; the page shows the latest, and a dev session rarely publishes this many. */
const MAX_ENTRIES = 200

/**
 * The generations published and the reloads that failed, newest last, as this process saw them.
 * A failure is marked resolved once a later generation publishes (the broken file was fixed).
 */
export class Timeline {
  readonly #entries: TimelineEntry[] = []

  constructor(first: { generation: number; diagnostics: readonly Diagnostic[] }) {
    const none = { added: [], changed: [], removed: [] }
    this.#entries.push({
      kind: 'generation',
      generation: first.generation,
      at: Date.now(),
      durationMs: 0,
      diff: { tools: none, skills: none },
      diagnostics: first.diagnostics.map(diagnosticView),
    })
  }

  published(event: GenerationEvent): TimelineEntry {
    for (const [index, entry] of this.#entries.entries()) {
      if (entry.kind === 'failed' && !entry.resolved) this.#entries[index] = { ...entry, resolved: true }
    }
    return this.#add({
      kind: 'generation',
      generation: event.generation,
      at: Date.now(),
      durationMs: event.durationMs,
      diff: event.diff,
      diagnostics: event.diagnostics.map(diagnosticView),
    })
  }

  failed(event: ReloadFailedEvent): TimelineEntry {
    return this.#add({
      kind: 'failed',
      at: Date.now(),
      durationMs: event.durationMs,
      message: event.error.message,
      diagnostics: event.diagnostics.map(diagnosticView),
      resolved: false,
    })
  }

  entries(): TimelineEntry[] {
    return this.#entries.slice()
  }

  #add(entry: TimelineEntry): TimelineEntry {
    this.#entries.push(entry)
    if (this.#entries.length > MAX_ENTRIES) this.#entries.splice(0, this.#entries.length - MAX_ENTRIES)
    return entry
  }
}

function diagnosticView(d: Diagnostic): DiagnosticView {
  return { ...d }
}

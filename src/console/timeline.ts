import { type Diagnostic, shortPath, withoutLocation } from '../features/diagnostic.js'
import type { GenerationEvent, ReloadFailedEvent } from '../runtime/generations/instrumentation.js'
import type { DiagnosticView, TimelineEntry } from './types.js'

/** Entries kept; the page shows the latest, and a dev session rarely publishes this many. */
const MAX_ENTRIES = 200

/**
 * The generations published and the reloads that failed, newest last, as this process saw them.
 * A failure is marked resolved once a later generation publishes (the broken file was fixed).
 */
export class Timeline {
  readonly #entries: TimelineEntry[] = []
  /** The plugin folder: files are shown relative to it, as the terminal shows them. */
  readonly #dir: string | undefined

  constructor(first: { generation: number; diagnostics: readonly Diagnostic[]; dir?: string | undefined }) {
    this.#dir = first.dir
    const none = { added: [], changed: [], removed: [] }
    this.#entries.push({
      kind: 'generation',
      generation: first.generation,
      at: Date.now(),
      durationMs: 0,
      diff: { tools: none, skills: none },
      diagnostics: first.diagnostics.map((d) => diagnosticView(d, this.#dir)),
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
      diagnostics: event.diagnostics.map((d) => diagnosticView(d, this.#dir)),
    })
  }

  failed(event: ReloadFailedEvent): TimelineEntry {
    return this.#add({
      kind: 'failed',
      at: Date.now(),
      durationMs: event.durationMs,
      message: event.error.message,
      diagnostics: event.diagnostics.map((d) => diagnosticView(d, this.#dir)),
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

/** A diagnostic as the page shows it: the file relative to the plugin, its location said once. */
function diagnosticView(d: Diagnostic, dir: string | undefined): DiagnosticView {
  if (d.file === undefined) return { ...d }
  return { ...d, file: shortPath(d.file, dir), message: withoutLocation(d.message, d.file, dir) }
}

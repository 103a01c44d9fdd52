import type { Server } from '@modelcontextprotocol/server'
import { messageOf } from '../../errors.js'
import type { McpCatalog } from './serve-mapping.js'

/**
 * Telling the served sessions what a publish changed: `list_changed` for tools, prompts and
 * resources to every ready session, `resources/updated` to the 2025-era sessions subscribed to a
 * changed resource (a 2026-07-28 server filters by its `subscriptions/listen` streams itself), and
 * the change to the listeners (the HTTP `subscriptions/listen` bus).
 */

/** Which served lists a publish changed. */
export interface CatalogChange {
  readonly tools: boolean
  readonly prompts: boolean
  readonly resources: boolean
  /** Listed resources whose content changed or that went away (`resources/updated` to subscribers). */
  readonly updated: readonly string[]
}

/** The sessions told of publishes, what each subscribed to, and the last catalog announced. */
export class Announcements {
  readonly #catalog: () => Promise<McpCatalog>
  readonly #closing: () => boolean
  readonly #log: (line: string) => void
  /** The sessions that finished the handshake (announcements go there). */
  readonly #ready = new Set<Server>()
  /** The URIs each 2025-era session subscribed to with `resources/subscribe`. */
  readonly #subscriptions = new WeakMap<Server, Set<string>>()
  /** 2026-07-28 servers: their subscriptions are the SDK's (`subscriptions/listen` filters), which it applies. */
  readonly #modern = new WeakSet<Server>()
  /** The listeners told of each publish that changed the served lists (the HTTP `subscriptions/listen` bus). */
  readonly #changeListeners = new Set<(change: CatalogChange) => void>()
  #announced: Promise<McpCatalog | undefined>

  /** `catalog` is the live generation's; nothing is announced once `closing()` holds. */
  constructor(catalog: () => Promise<McpCatalog>, closing: () => boolean, log: (line: string) => void) {
    this.#catalog = catalog
    this.#closing = closing
    this.#log = log
    this.#announced = catalog().catch(() => undefined)
  }

  /** `server` hears publishes from now on; a 2026-era one (`modern`) of every changed resource. */
  ready(server: Server, modern = false): void {
    this.#ready.add(server)
    if (modern) this.#modern.add(server)
  }

  /** `server` closed: it hears no more. */
  drop(server: Server): void {
    this.#ready.delete(server)
  }

  /** `resources/subscribe` on a 2025-era session. */
  subscribe(server: Server, uri: string): void {
    const uris = this.#subscriptions.get(server) ?? new Set<string>()
    this.#subscriptions.set(server, uris)
    uris.add(uri)
  }

  /** `resources/unsubscribe` on a 2025-era session. */
  unsubscribe(server: Server, uri: string): void {
    this.#subscriptions.get(server)?.delete(uri)
  }

  /** Called after every publish that changed the served lists; returns a disposer. */
  onChange(listener: (change: CatalogChange) => void): () => void {
    this.#changeListeners.add(listener)
    return () => this.#changeListeners.delete(listener)
  }

  /** Announces a publish to every ready session, once per change of the served lists. */
  publish(): void {
    this.#announced = this.#announced.then(async (previous) => {
      let next: McpCatalog
      try {
        next = await this.#catalog()
      } catch (error) {
        this.#log(`could not project the published generation: ${messageOf(error)}`)
        return previous
      }
      const tools = previous?.toolsText !== next.toolsText
      const prompts = previous?.promptsText !== next.promptsText
      const resources = previous?.resourcesText !== next.resourcesText
      const updated = previous === undefined ? [] : [...previous.resourceVersions].filter(([uri, version]) => next.resourceVersions.get(uri) !== version).map(([uri]) => uri)
      if ((tools || prompts || resources || updated.length > 0) && !this.#closing()) {
        await Promise.allSettled(
          [...this.#ready].map(async (server) => {
            if (tools) await server.sendToolListChanged()
            if (prompts) await server.sendPromptListChanged()
            if (resources) await server.sendResourceListChanged()
            const subscribed = this.#subscriptions.get(server)
            for (const uri of updated) if (this.#modern.has(server) || subscribed?.has(uri)) await server.sendResourceUpdated({ uri })
          }),
        )
        for (const listener of this.#changeListeners) {
          try {
            listener({ tools, prompts, resources, updated })
          } catch (error) {
            this.#log(`could not announce the published generation: ${messageOf(error)}`)
          }
        }
        const what = [tools ? 'tools' : '', prompts ? 'prompts' : '', resources ? 'resources' : '', updated.length > 0 ? `${updated.length} resource update(s)` : ''].filter(Boolean).join(' and ')
        // Said only when someone is listening: `seam dev` prints every log line.
        if (this.#ready.size > 0) this.#log(`generation ${next.generation}: ${what} list_changed sent to ${this.#ready.size} session(s)`)
      }
      return next
    })
  }
}

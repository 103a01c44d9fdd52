import { isStatusReporting, type ProviderStatus, type StatusReportingService } from '../../seams/types.js'
import type { Generation } from './generation.js'

/**
 * Follows the connection status of the providers registered in the active generation (those that
 * report one, such as `McpToolService`) and hands every change to `emit`: the root's `provider`
 * events. On each publish it subscribes to providers that are new and lets go of those that left;
 * a provider that is not connected when it is first followed is reported at once, so one that
 * failed while the generation was built is never silent.
 */
export class ProviderWatch {
  readonly #emit: (status: ProviderStatus) => void
  readonly #followed = new Map<StatusReportingService, () => void>()

  constructor(emit: (status: ProviderStatus) => void) {
    this.#emit = emit
  }

  /** Follows exactly the status-reporting providers of `generation`. */
  follow(generation: Generation): void {
    const current = new Set<StatusReportingService>()
    const seam = generation.seam
    if (seam) {
      for (const scope of new Set(['global', ...seam.tools.scopes()])) {
        for (const provider of seam.tools.getFor(scope)) if (isStatusReporting(provider)) current.add(provider)
      }
    }
    for (const [provider, unsubscribe] of this.#followed) {
      if (current.has(provider)) continue
      unsubscribe()
      this.#followed.delete(provider)
    }
    for (const provider of current) {
      if (this.#followed.has(provider)) continue
      this.#followed.set(provider, provider.onStatusChange((status) => this.#emit(status)))
      const status = read(provider)
      if (status && status.state !== 'connected') this.#emit(status)
    }
  }

  /** The current status of every followed provider, in registration order. */
  statuses(): ProviderStatus[] {
    return [...this.#followed.keys()].map(read).filter((status) => status !== undefined)
  }

  close(): void {
    for (const unsubscribe of this.#followed.values()) unsubscribe()
    this.#followed.clear()
  }
}

/** A provider's own status getter may throw: such a provider has no status to report. */
function read(provider: StatusReportingService): ProviderStatus | undefined {
  try {
    return provider.providerStatus
  } catch {
    return undefined
  }
}

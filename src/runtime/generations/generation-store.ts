import { performance } from 'node:perf_hooks'
import { SeamError } from '../../errors.js'
import type { Diagnostic } from '../../features/diagnostic.js'
import type { CapabilityIngress } from './capability-ingress.js'
import type { ToolCapability } from '../../seams/capabilities.js'
import type { Generation } from './generation.js'
import { buildGeneration, diagnosticOf, diffGenerations, type FeatureFiles, sameFeatures } from './generation-builder.js'
import type { GenerationDiff, GenerationEvent, Instrumentation, ReloadFailedEvent, ReloadProbe, ReloadResult } from './instrumentation.js'
import type { Logger } from '../base/logger.js'
import type { PluginInstance } from '../plugins/plugin-instance.js'
import type { PipelineHooks } from '../../seams/calls.js'
import type { PluginDefinition } from '../../features/plugin-types.js'
import { definePlugin } from '../plugins/plugin.js'

/** Where a root's files come from when it has a folder: hmr's `FolderSource` is the one there is. */
export interface GenerationSource {
  /** Drops what `changed` touched; `setup` says the root plugin file itself changed. */
  invalidate(changed: ReadonlySet<string> | undefined): { setup: boolean }
  nestedPluginChanged(probe?: ReloadProbe): Promise<boolean>
  load(root: PluginInstance, probe?: ReloadProbe): Promise<FeatureFiles>
  folderPlugin(dir: string, probe?: ReloadProbe): Promise<{ file: string; definition: PluginDefinition } | undefined>
  loadPlugin(probe?: ReloadProbe): Promise<PluginDefinition>
}

/** The session grants a publish prunes to the tools still projected (approvals' `ApprovalGrants`). */
export interface GrantRetention {
  retain(live: Iterable<{ readonly source: string; readonly fingerprint: string }>): void
}

export interface ReloadOptions {
  /** Run every plugin's setup again (default: when `changed` touches a plugin file, or always without `changed`). */
  readonly setup?: boolean
  /** The files that changed; every file loads again when absent. */
  readonly changed?: ReadonlySet<string>
  /**
   * File events: a build that changes nothing (a save without an edit, a second event for one write)
   * publishes nothing, and a failure the last report already showed is not reported again.
   */
  readonly skipUnchanged?: boolean
  /**
   * A provider announced a change (MCP `list_changed`, a lost or recovered server): the candidate
   * is published only when some owner's catalog (tools and skills) differs from the active one, and
   * a failure the last report already showed is not reported again.
   */
  readonly providerChange?: boolean
}

export interface GenerationStoreOptions {
  /** The root plugin; without it, the folder's `plugin.ts` (or an empty root). */
  readonly plugin?: PluginDefinition
  readonly source?: GenerationSource
  readonly baseDir?: string
  readonly hooks?: Partial<PipelineHooks>
  readonly ingress: CapabilityIngress
  readonly grants: GrantRetention
  readonly logger: Logger
  readonly instrumentation?: Instrumentation
  readonly onGeneration: (event: GenerationEvent) => void
  readonly onFailed: (event: ReloadFailedEvent) => void
}

/**
 * The generation sequence of a root: builds each candidate aside, publishes it by one pointer swap
 * or rolls it back while the active generation keeps serving, and keeps every generation a lease
 * still holds until it is disposed. Reloads run one at a time, in call order.
 */
export class GenerationStore {
  readonly #options: GenerationStoreOptions
  #active: Generation | undefined
  #number = 0
  #queue: Promise<unknown> = Promise.resolve()
  /** A build that was to run setup again failed: the next build from file changes runs it too. */
  #setupPending = false
  /** The failure last reported, until a generation is published. */
  #lastFailure: string | undefined
  #closed = false
  readonly #generations = new Set<Generation>()

  constructor(options: GenerationStoreOptions) {
    this.#options = options
  }

  get active(): Generation | undefined {
    return this.#active
  }

  /** Builds and publishes a candidate, or rolls it back; see `ReloadOptions`. */
  reload(options: ReloadOptions = {}): Promise<ReloadResult> {
    // The queue is extended before the first await, so reloads keep their call order.
    const next = this.#queue.then(() => {
      if (this.#closed) return closedResult()
      // Files named in `changed` (all when none are) load again; a failed setup build stays due.
      const touched = this.#options.source?.invalidate(options.changed)
      const setup = options.setup ?? (options.changed ? (touched?.setup ?? false) || this.#setupPending : true)
      return this.#build(setup, options.skipUnchanged ?? false, options.providerChange ?? false).then((result) => {
        if (setup) this.#setupPending = !result.ok
        return result
      })
    })
    this.#queue = next.catch(() => {})
    return next
  }

  /** Refuses further reloads (they answer `CLOSED`) and waits for the running one. */
  async close(): Promise<void> {
    this.#closed = true
    await this.#queue
  }

  /**
   * Retires the active generation and waits for every generation to be disposed once its leases
   * end, for at most `graceMs`; then disposes the rest regardless. The wait keeps the process
   * alive: with only an abandoned body left (a promise that never settles), an unref'd timer would
   * let Node exit mid-close (code 13) instead of finishing it.
   */
  async disposeAll(graceMs: number): Promise<void> {
    this.#active?.retire()
    const disposed = Promise.allSettled([...this.#generations].map((g) => g.whenDisposed))
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise((resolve) => {
      timer = setTimeout(resolve, graceMs)
    })
    try {
      if ((await Promise.race([disposed.then(() => 'done'), bound])) !== 'done') {
        await Promise.allSettled([...this.#generations].map((g) => g.dispose()))
      }
    } finally {
      clearTimeout(timer)
    }
  }

  async #build(setup: boolean, skipUnchanged: boolean, providerChange: boolean): Promise<ReloadResult> {
    const probe = this.#options.instrumentation?.reload()
    if (!probe) return this.#buildOnce(setup, skipUnchanged, providerChange, undefined)
    let result: ReloadResult | undefined
    try {
      result = await this.#buildOnce(setup, skipUnchanged, providerChange, probe)
      return result
    } finally {
      probe.ended(result ?? { ok: false, durationMs: 0, diagnostics: [], error: new SeamError('RELOAD_FAILED', 'the reload threw') })
    }
  }

  async #buildOnce(setup: boolean, skipUnchanged: boolean, providerChange: boolean, probe: ReloadProbe | undefined): Promise<ReloadResult> {
    const started = performance.now()
    const previous = this.#active
    const number = ++this.#number
    const reuse = !setup && previous ? previous.root : undefined
    let plugin = reuse ?? (await this.#rootDefinition(probe).catch((error: unknown) => error as Error))
    if (plugin instanceof Error) {
      const error = SeamError.is(plugin) ? plugin : new SeamError('INVALID_PLUGIN', plugin.message, { cause: plugin })
      return this.#failed(started, [diagnosticOf(error, 'INVALID_PLUGIN')], error, skipUnchanged || providerChange)
    }
    // A plugin file that bundles to the same code keeps the mounted tree: its setup does not run again.
    const source = this.#options.source
    // The same for the plugin files of child folders.
    if (skipUnchanged && previous && plugin === previous.root.definition && !this.#setupPending && !(await source?.nestedPluginChanged(probe))) plugin = previous.root
    const result = await buildGeneration({
      number,
      plugin,
      baseDir: this.#options.baseDir,
      hooks: this.#options.hooks,
      ingress: this.#options.ingress,
      logger: this.#options.logger,
      files: source ? (root) => source.load(root, probe) : undefined,
      folderPlugin: source ? (dir) => source.folderPlugin(dir, probe) : undefined,
      probe,
      watchProvider: (provider) => provider.onDidChange(() => this.#providerChanged()),
    })
    if (!result.ok) return this.#failed(started, result.diagnostics, result.error, skipUnchanged || providerChange)
    const generation = result.generation
    const diff = await diffGenerations(this.#options.ingress, previous, generation)
    const unchanged =
      (skipUnchanged && previous && this.#lastFailure === undefined && sameFeatures(previous, generation, diff)) ||
      (providerChange && previous && this.#lastFailure === undefined && (await sameCatalog(this.#options.ingress, previous, generation)))
    if (unchanged && previous) {
      this.#number--
      await generation.dispose().catch(() => {})
      return { ok: true, generation: previous.number, durationMs: performance.now() - started, diff, diagnostics: previous.diagnostics }
    }
    this.#lastFailure = undefined
    const publishing = performance.now()
    // Publish: one pointer swap. Turns on the previous generation keep their lease.
    generation.activate()
    this.#active = generation
    this.#generations.add(generation)
    void generation.whenDisposed.then(() => this.#generations.delete(generation))
    previous?.retire()
    // Grants for tools some owner of the new generation still sees (projections are cached).
    const projections = await Promise.all([...generation.owners].map((owner) => this.#options.ingress.project(generation, owner)))
    this.#options.grants.retain(toolsOf(projections))
    const event: GenerationEvent = { generation: number, durationMs: performance.now() - started, diff, diagnostics: generation.diagnostics }
    probe?.phase('publish', publishing, performance.now())
    this.#options.onGeneration(event)
    return { ok: true, ...event }
  }

  #failed(started: number, diagnostics: readonly Diagnostic[], error: SeamError, skipRepeated: boolean): ReloadResult {
    this.#number--
    const event: ReloadFailedEvent = { durationMs: performance.now() - started, diagnostics, error }
    const key = JSON.stringify([error.code, error.message, diagnostics])
    // Before generation 1 there is nothing to keep serving: the caller throws instead.
    if (this.#active && !(skipRepeated && key === this.#lastFailure)) this.#options.onFailed(event)
    this.#lastFailure = key
    return { ok: false, ...event }
  }

  #rootDefinition(probe: ReloadProbe | undefined): Promise<PluginDefinition> {
    if (this.#options.plugin) return Promise.resolve(this.#options.plugin)
    if (this.#options.source) return this.#options.source.loadPlugin(probe)
    return Promise.resolve(definePlugin({ name: 'root' }))
  }

  #providerChanged(): void {
    if (this.#closed) return
    // A provider's tool list changed: project again, reusing every plugin and every loaded file.
    void this.reload({ setup: false, changed: new Set(), providerChange: true }).catch(() => {})
  }
}

/** Whether every owner of either generation sees the same tools and skills in both. */
async function sameCatalog(ingress: CapabilityIngress, previous: Generation, next: Generation): Promise<boolean> {
  const empty = (d: GenerationDiff['tools']) => d.added.length + d.changed.length + d.removed.length === 0
  for (const owner of new Set([...previous.owners, ...next.owners])) {
    const diff = await diffGenerations(ingress, previous, next, owner)
    if (!empty(diff.tools) || !empty(diff.skills)) return false
  }
  return true
}

/** Lazily: with no grants held (the usual case) `retain` never walks them. */
function* toolsOf(projections: readonly { readonly tools: readonly ToolCapability[] }[]): Generator<ToolCapability> {
  for (const projection of projections) yield* projection.tools
}

function closedResult(): ReloadResult {
  return { ok: false, durationMs: 0, diagnostics: [], error: new SeamError('CLOSED', 'the root is closed') }
}

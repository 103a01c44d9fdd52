import { messageOf, SeamError } from '../../errors.js'
import type { Diagnostic } from '../../features/diagnostic.js'
import type { SkillSpec, ToolDefinition } from '../../features/define-tool.js'
import { capabilitySeamToken, type SeamIntegration } from '../../seams/integration.js'
import type { PipelineHooks } from '../../seams/calls.js'
import type { ResourceContents } from '../../seams/resources.js'
import type { Logger } from '../base/logger.js'
import type { PluginInstance } from '../plugins/plugin-instance.js'

export type GenerationState = 'preparing' | 'active' | 'retired' | 'disposed' | 'failed'

/** One tool file or `addTool`, immutable. */
export interface ToolSlot {
  readonly id: string
  readonly owner: string
  /** The qualified name the model sees. */
  readonly name: string
  /** `tools/lookup.ts` relative to the plugin folder, or `addTool`. */
  readonly source: string
  readonly definition: ToolDefinition
  readonly plugin: PluginInstance
}

/** One skill file or `addSkill`, immutable. */
export interface SkillSlot {
  readonly id: string
  readonly owner: string
  readonly name: string
  readonly source: string
  readonly definition: Readonly<SkillSpec>
}

/** One resource file, `addResource` or template, immutable. */
export interface ResourceSlot {
  readonly id: string
  readonly owner: string
  /** The URI, or a template's URI template. */
  readonly uri: string
  readonly template: boolean
  /** `agent/resources/a.md` relative to the base folder, or `addResource(<owner>)`. */
  readonly source: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  readonly size?: number
  /** What a read of it in this generation returns (a template's parameters filled in from `uri`). */
  read(uri: string, params: Record<string, string>, signal: AbortSignal): Promise<ResourceContents[]>
  /** A template's completer of `param` (`ResourceSpec.complete`), called with what was typed; absent when it has none. */
  complete?(param: string, value: string): unknown
  /**
   * Equal in two generations when the resource reads the same (a file's digest, an `addResource`
   * definition object): a subscribed client is told of every other change.
   */
  readonly version: unknown
}

export interface GenerationParts {
  readonly number: number
  readonly root: PluginInstance
  readonly tools: readonly ToolSlot[]
  readonly skills: readonly SkillSlot[]
  readonly resources?: readonly ResourceSlot[]
  readonly diagnostics: readonly Diagnostic[]
  /** Host-level hooks (from `createRoot`), run before any plugin's. */
  readonly hooks?: Partial<PipelineHooks>
  /** Runs when the generation is disposed (module releases, provider subscriptions). */
  readonly onDispose?: () => unknown
  /** Told about a disposal that failed: nobody awaits a retired generation's disposal. */
  readonly logger?: Pick<Logger, 'warn'>
}

/**
 * An immutable, numbered snapshot of everything a turn can see. `preparing → active → retired →
 * disposed`, or `preparing → failed`. A retired generation is disposed when its last lease ends.
 */
export class Generation {
  readonly number: number
  readonly root: PluginInstance
  readonly tools: readonly ToolSlot[]
  readonly skills: readonly SkillSlot[]
  readonly resources: readonly ResourceSlot[]
  readonly diagnostics: Diagnostic[]
  readonly hooks: PipelineHooks
  readonly seam: SeamIntegration | undefined
  /**
   * Who a turn may run as: `root`, every plugin below it, and every scope a seam provider is
   * registered for. Each is projected while the generation is built, so a turn never sees live state.
   */
  readonly owners: ReadonlySet<string>
  /** Per-owner projections, computed once per generation (see CapabilityIngress). */
  readonly projections = new Map<string, Promise<unknown>>()
  readonly #onDispose: (() => unknown) | undefined
  readonly #logger: Pick<Logger, 'warn'> | undefined
  #state: GenerationState = 'preparing'
  #leases = 0
  #disposal: Promise<void> | undefined
  readonly #disposed: Promise<void>
  #resolveDisposed!: () => void

  constructor(parts: GenerationParts) {
    this.number = parts.number
    this.root = parts.root
    // A frozen array is kept as it is (the builder makes one per generation); any other is copied.
    this.tools = Object.isFrozen(parts.tools) ? parts.tools : Object.freeze([...parts.tools])
    this.skills = Object.freeze([...parts.skills])
    this.resources = Object.freeze([...(parts.resources ?? [])])
    this.diagnostics = [...parts.diagnostics]
    this.#onDispose = parts.onDispose
    this.#logger = parts.logger
    this.seam = parts.root.resources.get(capabilitySeamToken)
    this.hooks = collectHooks(parts.root, parts.hooks ?? {})
    const owners = new Set(['root', ...[...parts.root.walk()].map((p) => p.owner), ...(this.seam?.tools.scopes() ?? []), ...(this.seam?.skills.scopes() ?? []), ...(this.seam?.resources.scopes() ?? [])])
    owners.delete('global')
    this.owners = owners
    parts.root.retain()
    this.#disposed = new Promise((resolve) => {
      this.#resolveDisposed = resolve
    })
  }

  get state(): GenerationState {
    return this.#state
  }

  get leases(): number {
    return this.#leases
  }

  /** True while calls may still run on it: active, or retired but leased. */
  get live(): boolean {
    return this.#state === 'active' || (this.#state === 'retired' && this.#leases > 0)
  }

  /** Resolves once the generation's plugins and modules have been disposed. */
  get whenDisposed(): Promise<void> {
    return this.#disposed
  }

  /** Keeps the generation alive; the returned release is idempotent. */
  lease(): () => void {
    this.#leases++
    let released = false
    return () => {
      if (released) return
      released = true
      this.#leases--
      if (this.#leases === 0 && this.#state === 'retired') void this.dispose().catch(() => {})
    }
  }

  activate(): void {
    this.#state = 'active'
  }

  /** Retires the generation; it is disposed now, or when its last lease ends. */
  retire(): void {
    if (this.#state !== 'active') return
    this.#state = 'retired'
    if (this.#leases === 0) void this.dispose().catch(() => {})
  }

  /** Marks a candidate as failed and disposes what it created. */
  async fail(): Promise<void> {
    this.#state = 'failed'
    await this.dispose()
  }

  dispose(): Promise<void> {
    this.#disposal ??= (async () => {
      if (this.#state !== 'failed') this.#state = 'disposed'
      try {
        // The plugin tree is released even when the generation's own disposers fail.
        try {
          await this.#onDispose?.()
        } finally {
          await this.root.release()
        }
      } catch (error) {
        const labels = SeamError.is(error, 'DISPOSE_FAILED') ? error.details?.labels : undefined
        this.#logger?.warn(`generation ${this.number} was disposed with errors: ${messageOf(error)}`, { generation: this.number, labels })
        throw error
      } finally {
        this.#resolveDisposed()
      }
    })()
    return this.#disposal
  }
}

function collectHooks(root: PluginInstance, host: Partial<PipelineHooks>): PipelineHooks {
  const hooks = {
    preExecute: [...(host.preExecute ?? [])],
    execute: [...(host.execute ?? [])],
    postExecute: [...(host.postExecute ?? [])],
    result: [...(host.result ?? [])],
    guards: [...(host.guards ?? [])],
  }
  // A snapshot: hooks a plugin registers or disposes later do not change a running generation.
  for (const plugin of root.walk()) {
    hooks.preExecute.push(...plugin.hooks.preExecute)
    hooks.execute.push(...plugin.hooks.execute)
    hooks.postExecute.push(...plugin.hooks.postExecute)
    hooks.result.push(...plugin.hooks.result)
    hooks.guards.push(...plugin.hooks.guards)
  }
  return Object.freeze({
    preExecute: Object.freeze(hooks.preExecute),
    execute: Object.freeze(hooks.execute),
    postExecute: Object.freeze(hooks.postExecute),
    result: Object.freeze(hooks.result),
    guards: Object.freeze(hooks.guards),
  })
}

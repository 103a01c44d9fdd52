import path from 'node:path'
import { untilDue } from './base/abort.js'
import { rescanEnvironment } from './base/redact.js'
import { Activity } from './base/activity.js'
import { SeamError } from '../errors.js'
import { ApprovalGrants } from './approvals/approval.js'
import { Approvals, subjectOf } from './approvals/approvals.js'
import { writeSettlement } from './pipeline/park.js'
import { notYours } from './pipeline/resume.js'
import { HostLease } from './generations/host-lease.js'
import { MAX_TIMER_MS } from './base/deadlines.js'
import type { ApprovalPort, PermissionHost } from '../seams/approval.js'
import { CapabilityIngress } from './generations/capability-ingress.js'
import type { AgentCapabilities } from '../seams/capabilities.js'
import type { Generation } from './generations/generation.js'
import { GenerationStore } from './generations/generation-store.js'
import type { GenerationEvent, ReloadFailedEvent, ReloadResult } from './generations/instrumentation.js'
import { hostModules, instrumentationOf } from './generations/late-bound.js'
import type { Instrumentation, TelemetryOptions } from './generations/instrumentation.js'
import { memoryJournal } from './journal/memory.js'
import type { JournalStore, RepairReport } from '../seams/journal.js'
import { Listeners } from './base/listeners.js'
import { Logger, type LogSink } from './base/logger.js'
import type { PluginDefinition } from '../features/plugin-types.js'
import type { AbandonedCall } from './pipeline/abandoned-call.js'
import type { RuntimeLimits } from './pipeline/limits.js'
import type { PipelineHooks, ProgressEvent, ToolCallOutcome } from '../seams/calls.js'
import { ProviderWatch } from './generations/provider-watch.js'
import { DisposableScope } from './plugins/scope.js'
import { type BeginTurnInput, openTurn, resumeParked, type Turn, type TurnHost } from './turns/turn.js'
import { resolveLimits } from './pipeline/limits.js'
import type { ProviderStatus } from '../seams/types.js'
import { locate } from '../features/loader/index.js'
import { FolderSource } from './hmr/folder-source.js'
import { followFolder } from './hmr/follow-folder.js'
import { CodeMode, type CodeModeOption } from './code/run-code.js'

/** How long closing waits to retire this host's heartbeat (never longer than the journal deadline). */
const RETIRE_TIMEOUT_MS = 2_000

export type { GenerationEvent, ReloadFailedEvent, ReloadResult } from './generations/instrumentation.js'
export type { BeginTurnInput } from './turns/turn.js'

const DEFAULT_LEASE_MS = 30_000

export interface ResumeOptions {
  /** Who asks to resume: a `subjectId` or a principal. It must be the parked call's own, or an operator's. */
  readonly principal: string | { readonly subjectId: string }
  readonly signal?: AbortSignal
}

export interface RootOptions {
  /** The root plugin. With `dir`, its folder; without, the root plugin is loaded from `dir`. */
  readonly plugin?: PluginDefinition
  /** A plugin folder (`plugin.ts`, `tools/`, `agent/skills/`). */
  readonly dir?: string
  /** Default `memoryJournal()`. */
  readonly journal?: JournalStore
  /** The default approval port for interactive turns that bring none. */
  readonly approval?: ApprovalPort
  /**
   * The `subjectId`s of operators: `root.resume(token, { principal })` and
   * `root.approvals.pending({ as })` let them resume, and see the resume token of, any parked call,
   * not only their own. Default none.
   */
  readonly operators?: readonly string[]
  readonly permissions?: PermissionHost
  /** Follow the plugin folder and publish a generation per change (needs `dir`). */
  readonly watch?: boolean
  readonly defaults?: Partial<RuntimeLimits>
  /** Host-level hooks, run before every plugin's. */
  readonly hooks?: Partial<PipelineHooks>
  readonly log?: LogSink
  /**
   * Close open calls and turns left by a crash when the journal opens, and then on every heartbeat
   * (those of hosts past their lease). Default true.
   */
  readonly repair?: boolean
  /**
   * How long after its last heartbeat in the journal this host counts as dead to the others, who
   * then repair what it left open. It beats every third of this. Default 30 000 ms.
   */
  readonly leaseMs?: number
  /** Quiet time after the last file event before a reload (watch mode). Default 20 ms. */
  readonly debounceMs?: number
  /**
   * Told of turns, calls, reloads and journal commits: OpenTelemetry spans and metrics with
   * `{ recordArguments, recordResults, … }` (the options of `openTelemetry()`, which it stands for),
   * or a host's own `Instrumentation`. Default: none, and nothing is reported.
   */
  readonly telemetry?: Instrumentation | TelemetryOptions
  /**
   * Code Mode: offer every turn the built-in `run_code` tool (a turn may say otherwise with
   * `beginTurn({ codeMode })`), with these run limits. Default off. See docs/code-mode.md.
   */
  readonly codeMode?: CodeModeOption
}

interface RootEvents {
  generation: GenerationEvent
  'reload-failed': ReloadFailedEvent
  abandoned: AbandonedCall
  /** A provider of the active generation connected, went down or is retrying (see `root.providers()`). */
  provider: ProviderStatus
  /** A running call reported progress (`ctx.progress()`, a mounted server's), throttled per call. */
  progress: ProgressEvent
}

/**
 * The host: owns the root plugin, its generation store, the journal, the watcher and the open
 * turns. Build with `createRoot()`. A reload builds a candidate aside and publishes it by one pointer
 * swap, or rolls it back while the active generation keeps serving.
 */
export class Root {
  readonly journal: JournalStore
  readonly ingress: CapabilityIngress
  /** Parked calls in the journal (from this and every other process on it): list, decide, expire. */
  readonly approvals: Approvals
  readonly scope = new DisposableScope()
  readonly #options: RootOptions
  readonly #logger: Logger
  readonly #grants: ApprovalGrants
  readonly #events = new Listeners<RootEvents>()
  readonly #limits: RuntimeLimits
  readonly #telemetry: Instrumentation | undefined
  readonly #generations: GenerationStore
  #closing: Promise<void> | undefined
  #repair: RepairReport | undefined
  readonly #turns = new Set<Turn>()
  /** Calls in flight on every turn of this root, ended ones included. */
  readonly #activity = new Activity()
  readonly #source: FolderSource
  readonly #providers = new ProviderWatch((status) => this.#events.emit('provider', status))
  /** What every turn this root begins is lent (see `openTurn`). */
  readonly #turnHost: TurnHost
  readonly #code: CodeMode

  /** Prefer `createRoot()`; the constructor only assigns. */
  constructor(options: RootOptions) {
    this.#options = options
    // Secrets in this process's environment as it is now are scrubbed from the journal and logs.
    rescanEnvironment()
    this.journal = options.journal ?? memoryJournal()
    this.#limits = resolveLimits(options.defaults)
    this.#telemetry = instrumentationOf(options.telemetry)
    this.ingress = new CapabilityIngress({ permissions: options.permissions, permissionTimeoutMs: this.#limits.policyTimeoutMs })
    this.#logger = new Logger(options.log ?? (() => {}))
    this.approvals = new Approvals(this.journal, this.#limits.approvalTtlMs, options.operators ?? [], writeSettlement)
    this.#grants = new ApprovalGrants(this.journal.coordination)
    this.#code = new CodeMode(options.codeMode)
    this.#turnHost = {
      code: this.#code,
      journal: this.journal,
      ingress: this.ingress,
      grants: this.#grants,
      limits: this.#limits,
      activity: this.#activity,
      telemetry: this.#telemetry,
      approval: options.approval,
      onAbandoned: this.#onAbandoned,
      onProgress: this.#onProgress,
      locate,
      forget: (turn) => this.#turns.delete(turn),
    }
    // Also without a folder of its own: a child plugin may declare one.
    this.#source = new FolderSource(options.dir, hostModules)
    this.#generations = new GenerationStore({
      plugin: options.plugin,
      source: this.#source,
      baseDir: options.dir ? path.resolve(options.dir) : undefined,
      hooks: options.hooks,
      ingress: this.ingress,
      grants: this.#grants,
      logger: this.#logger,
      instrumentation: this.#telemetry,
      onGeneration: (event) => {
        // Followed before the event goes out: a listener reading `providers()` sees the new set.
        if (this.#generations.active) this.#providers.follow(this.#generations.active)
        this.#events.emit('generation', event)
      },
      onFailed: (event) => this.#events.emit('reload-failed', event),
    })
  }

  /** The plugin folder, when the root has one. */
  get dir(): string | undefined {
    return this.#source.dir
  }

  /** The number of the active generation. */
  get generation(): number {
    return this.#generations.active?.number ?? 0
  }

  /** The limits every call of this root runs under (`createRoot({ defaults })` over the built-in ones). Frozen. */
  get limits(): Readonly<RuntimeLimits> {
    return this.#limits
  }

  /** The active generation (for hosts composing `TurnToolRuntime` themselves). */
  get activeGeneration(): Generation {
    this.#assertOpen()
    return this.#generations.active!
  }

  /**
   * The connection status of each provider in the active generation that reports one (MCP servers):
   * a provider that is `down` contributes no tools, and says why and when it retries.
   */
  providers(): ProviderStatus[] {
    return this.#providers.statuses()
  }

  /** What crash repair closed when the journal opened. */
  get repaired(): RepairReport | undefined {
    return this.#repair
  }

  get closed(): boolean {
    return this.#closing !== undefined
  }

  on<K extends keyof RootEvents>(event: K, listener: (event: RootEvents[K]) => void): () => void {
    return this.#events.on(event, listener)
  }

  /** Opens the journal (heartbeat, then crash repair) and publishes generation 1. Called by `createRoot`. */
  async start(): Promise<void> {
    const telemetry = this.#telemetry
    if (telemetry?.committed && this.journal.onCommit) {
      this.scope.add(this.journal.onCommit((events) => telemetry.committed!(events)), 'journal instrumentation')
    }
    const repair = this.#options.repair !== false
    const leaseMs = this.#options.leaseMs ?? DEFAULT_LEASE_MS
    if (!Number.isSafeInteger(leaseMs) || leaseMs < 3 || leaseMs > MAX_TIMER_MS) {
      throw new SeamError('INVALID_OPTIONS', `\`leaseMs\` must be a whole number of milliseconds from 3 to ${MAX_TIMER_MS}, got ${String(leaseMs)}`)
    }
    const lease = new HostLease({
      journal: this.journal,
      leaseMs,
      tick: async () => {
        if (repair) await this.journal.repair()
        await this.approvals.expire()
      },
      onError: (error) => this.#logger.warn('the journal heartbeat, repair or expiry failed', { error: String(error) }),
    })
    await lease.start()
    // Closed last of the scope (added first): after the turns, before the journal. Retiring the
    // heartbeat is a courtesy write: one that stalls (a dead link) is given up on after a short
    // while, and the other hosts find this one gone when its lease runs out.
    this.scope.add(() => untilDue(lease.close(), undefined, Math.min(this.#limits.journalTimeoutMs, RETIRE_TIMEOUT_MS)), 'host lease')
    this.scope.add(() => this.#code.close(), 'code sandbox')
    if (repair) this.#repair = await this.journal.repair()
    const result = await this.#generations.reload({ setup: true })
    if (!result.ok) {
      const first = result.diagnostics[0]
      const message = result.diagnostics.map((d) => d.message).join('\n') || result.error.message
      throw new SeamError('RELOAD_FAILED', `the root could not build its first generation: ${message}`, {
        cause: result.error,
        details: first ? { ...first, diagnostics: result.diagnostics } : undefined,
      })
    }
    if (this.#options.watch) {
      await followFolder({ source: this.#source, generations: this.#generations, scope: this.scope, logger: this.#logger, debounceMs: this.#options.debounceMs, closed: () => this.closed })
    }
  }

  /**
   * Builds a candidate generation (re-running setup unless `setup: false`), then publishes it or
   * rolls it back. Reloads are serialised; the result says which happened. After `close()` it
   * rejects with `CLOSED` (never throws synchronously); a reload still queued then answers `CLOSED`.
   */
  async reload(options: { setup?: boolean; changed?: ReadonlySet<string> } = {}): Promise<ReloadResult> {
    this.#assertOpen()
    return this.#generations.reload({ setup: options.setup, changed: options.changed })
  }

  /** Leases the active generation for a new turn and journals `turn/begin`. */
  async beginTurn(input: BeginTurnInput): Promise<Turn> {
    this.#assertOpen()
    const generation = this.#generations.active!
    const release = generation.lease()
    try {
      const turn = await openTurn(this.#turnHost, generation, input, release)
      this.#turns.add(turn)
      if (this.closed) {
        // close() began while this turn was starting and may already have ended the open turns:
        // end this one too (turn/end journaled, lease released) so close is not held up by it.
        await turn.end()
        throw new SeamError('CLOSED', 'the root closed while this turn was beginning')
      }
      return turn
    } catch (error) {
      release()
      throw error
    }
  }

  /**
   * Continues a parked call from any process on the same journal, in the active generation, with
   * the root's approval port (asked again if the tool changed since the call was parked). Resolves
   * like `turn.tools.resume`: the call's one result, or `suspended` while it waits for a decision.
   * `principal` is who asks: the call's own principal, or an operator (`operators`); anyone else
   * gets `APPROVAL_FORBIDDEN` and nothing runs.
   */
  async resume(token: string, options: ResumeOptions): Promise<ToolCallOutcome> {
    this.#assertOpen()
    if (typeof token !== 'string' || token === '') throw new SeamError('INVALID_CALL', 'resume needs a resume token')
    const asker = subjectOf(options?.principal)
    if (typeof asker !== 'string' || asker === '') {
      throw new SeamError('INVALID_CALL', 'root.resume needs `principal`: who asks to resume (the call\'s own principal, or an operator)', {
        hint: "root.resume(token, { principal: 'user-1' })",
      })
    }
    // In flight from here, as a turn's calls are: `close()` waits for the resumed call to settle and
    // journal its result (within its deadlines), whatever grace a generation gets when disposed.
    this.#activity.begin()
    try {
      const [round] = await this.journal.coordination.parked({ token, settled: true })
      if (round === undefined) throw new SeamError('UNKNOWN_APPROVAL', `no parked call has the resume token "${token}"`, { details: { token } })
      if (asker !== round.subjectId && !this.approvals.isOperator(asker)) throw notYours(round.callId)
      const generation = this.#generations.active!
      return await resumeParked(this.#turnHost, generation, round, options.signal, generation.lease())
    } finally {
      this.#activity.end()
    }
  }

  /**
   * `capabilities` of `generation` with the built-in `run_code` added when the root's Code Mode is on,
   * as its turns see them: what a server listing the catalog without a turn (MCP `tools/list`) shows.
   */
  withCodeMode(capabilities: AgentCapabilities, generation: Generation): AgentCapabilities {
    return this.#code.offer(capabilities, generation, this.#code.enabled)
  }

  /** The root owner's capabilities in the active generation, without a turn (restricted tools hidden). */
  async capabilities(owner = 'root'): Promise<AgentCapabilities> {
    this.#assertOpen()
    return this.ingress.read(this.#generations.active!, owner)
  }

  /**
   * Stops accepting turns, lets every running call settle (each within its stage deadlines, also
   * those of turns already ended) and journal its result, ends the turns still open (their leases
   * are released), disposes each generation once its last lease is released, and closes the journal.
   * Idempotent. A body abandoned past its deadline keeps its generation for at most `graceMs` more
   * before disposal goes ahead; close always finishes.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#generations.close()
      this.#providers.close()
      // Ending a turn lets its running calls settle first and withdraws its open approval
      // questions: a question waiting for a person does not hold the close for approvalTimeoutMs.
      await Promise.allSettled([...this.#turns].map((turn) => turn.end()))
      while (this.#activity.count > 0) await this.#activity.idle()
      await this.scope.dispose().catch(() => {})
      await this.#generations.disposeAll(this.#limits.graceMs)
      // A call begun meanwhile on an ended turn (it settles as GENERATION_RETIRED) still writes its
      // pair: the journal closes in the same synchronous step that finds nothing in flight.
      while (this.#activity.count > 0) await this.#activity.idle()
      await this.journal.close()
    })()
    return this.#closing
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  readonly #onAbandoned = (call: AbandonedCall) => this.#events.emit('abandoned', call)
  readonly #onProgress = (event: ProgressEvent) => this.#events.emit('progress', event)

  #assertOpen(): void {
    if (this.#closing) throw new SeamError('CLOSED', 'the root is closed', { hint: 'create a new root with createRoot()' })
  }
}

/** Builds a root and publishes generation 1. */
export async function createRoot(options: RootOptions): Promise<Root> {
  if (options === null || typeof options !== 'object') throw new SeamError('INVALID_PLUGIN', 'createRoot expects options')
  if (!options.plugin && !options.dir) throw new SeamError('INVALID_PLUGIN', 'createRoot needs a `plugin` or a `dir`')
  const { operators } = options
  if (operators !== undefined && (!Array.isArray(operators) || operators.some((id) => typeof id !== 'string' || id === ''))) {
    throw new SeamError('INVALID_OPTIONS', '`operators` must be a list of subjectIds (non-empty strings)')
  }
  const root = new Root(options)
  try {
    await root.start()
  } catch (error) {
    await root.close().catch(() => {})
    throw error
  }
  return root
}

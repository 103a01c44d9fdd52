import type { ElicitRequestParams, ElicitResult } from '@modelcontextprotocol/client'
import { context as contexts, trace } from '@opentelemetry/api'
import { messageOf, SeamError } from '../../errors.js'
import { deepFreeze } from '../../features/schema.js'
import { ABORTED, untilAborted } from '../../runtime/base/abort.js'
import type {
  ChangeNotifyingService,
  ProviderStatus,
  StatusReportingService,
  ToolExecutionResult,
  ToolInvocationContext,
  SkillService,
  ToolSchema,
  ToolService,
} from '../../seams/types.js'
import type { ResourceContents, ResourceDescriptor, ResourceService, ResourceTemplateDescriptor } from '../../seams/resources.js'
import { endRequestSpan, parentFor, startRequestSpan, traceMeta } from '../trace-context.js'
import { scrubValues } from '../../runtime/base/redact.js'
import { fromCallError, fromCallResult } from './call-result.js'
import type { McpConnection } from './connection.js'
import { oauthProvider } from './auth-option.js'
import type { StoredOAuthProvider } from './oauth.js'
import { checkOptions, DEFAULT_CALL_TIMEOUT_MS, describeTarget, type McpToolServiceOptions, SETUP_TIMEOUT_MS } from './options.js'
import { promptCatalog, promptInstructions } from './prompts.js'
import { askThrough } from './questions.js'
import { type Redactor, redactedError, redactorFor, safeMessage } from './redact.js'
import { listResources, readContents } from './resources.js'
import { mapTools, remoteName, TOOL_NAME } from './schema-mapping.js'
import { observeStatus } from './status-metric.js'
import { ServiceListeners } from './service-listeners.js'
import { ConnectionSupervisor, type McpServiceStatus } from './supervisor.js'

/** How much later than the pipeline's deadline the SDK's own request timer fires. */
const SDK_TIMER_GRACE_MS = 250

/**
 * A remote MCP server (stdio or streamable HTTP) as a `ToolService`. `schema()` serves the server's
 * `tools/list`, cached until it announces `list_changed`; `execute()` is one `tools/call` under the
 * caller's signal. The first `schema()` connects. While the server is unreachable `schema()` and
 * `execute()` reject with `PROVIDER_UNAVAILABLE`, so new generations leave its tools out and calls
 * settle with that code, and the service reconnects in the background; every change of the visible
 * tool set (list_changed, lost, back) reaches `onDidChange` listeners, every change of its
 * connection reaches `onStatusChange` listeners (the root's `provider` events).
 */
export class McpToolService implements ToolService, ResourceService, SkillService, ChangeNotifyingService, StatusReportingService {
  readonly id: string
  readonly description: string
  readonly #options: McpToolServiceOptions
  readonly #timeoutMs: number
  readonly #maxTimeoutMs: number | undefined
  readonly #redact: Redactor
  readonly #supervisor: ConnectionSupervisor
  readonly #listeners = new ServiceListeners()
  #epoch = 0
  #cache: { connection: McpConnection; epoch: number; schemas: Promise<readonly ToolSchema[]> } | undefined
  #notes: string[] = []
  /** The contexts of the calls in flight: where a server's question is forwarded (see `#elicit`). */
  readonly #running = new Set<ToolInvocationContext>()
  readonly #unobserve: () => void
  readonly #oauth: StoredOAuthProvider | undefined
  readonly #lifetime = new AbortController()

  constructor(options: McpToolServiceOptions) {
    this.id = options.id
    this.description = options.description ?? `MCP server "${options.id}" (${describeTarget(options.transport)})`
    this.#options = options
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS
    checkOptions(options, this.#timeoutMs)
    this.#maxTimeoutMs = options.maxTimeoutMs
    this.#oauth = oauthProvider(options, this.#lifetime.signal)
    // The registered secrets too: the tokens this service obtains are known only once it has them.
    const byTransport = redactorFor(options.transport)
    this.#redact = (text) => scrubValues(byTransport(text))
    this.#supervisor = new ConnectionSupervisor(
      {
        serverId: options.id,
        transport: options.transport,
        setupTimeoutMs: SETUP_TIMEOUT_MS,
        redact: this.#redact,
        reconnect: options.reconnect,
        protocol: options.protocol ?? 'auto',
        ...(this.#oauth ? { oauth: this.#oauth } : {}),
        tasks: options.tasks !== false,
      },
      {
        onToolsChanged: () => this.#changed(),
        onAvailabilityChanged: () => this.#changed(),
        onStatus: () => this.#statusChanged(),
        onElicit: (params, signal) => this.#elicit(params, signal),
      },
    )
    this.#unobserve = observeStatus(this.id, () => this.status)
  }

  get status(): McpServiceStatus {
    return this.#supervisor.status
  }

  /** Why the server is unavailable, or which tools its last `tools/list` dropped. Never holds secrets. */
  get diagnostic(): string | undefined {
    return this.#supervisor.diagnostic ?? (this.#notes.length > 0 ? this.#notes.join('; ') : undefined)
  }

  /** The status the root reports as `provider` events (and `seam dev` / `seam tools` print). */
  get providerStatus(): ProviderStatus {
    const status = this.#supervisor.status
    const reason = this.diagnostic
    const retryAt = this.#supervisor.retryAt
    return Object.freeze({
      provider: this.id,
      state: status,
      ...(reason !== undefined ? { reason } : {}),
      ...(retryAt !== undefined ? { retryAt } : {}),
    })
  }

  onStatusChange(listener: (status: ProviderStatus) => void): () => void {
    return this.#listeners.onStatusChange(listener)
  }

  /** The MCP revision negotiated with the server while connected: the newest both speak (`2026-07-28`, else `2025-11-25`). */
  get protocolVersion(): string | undefined {
    return this.#supervisor.connection?.protocolVersion
  }

  /** The child's process id while a stdio server is connected. */
  get pid(): number | undefined {
    return this.#supervisor.connection?.pid
  }

  /**
   * Connects (spawns or dials) and completes the handshake; idempotent (a second call waits for the
   * same attempt). Optional: the first generation that lists the service's tools connects it. On
   * failure it rejects with `PROVIDER_UNAVAILABLE` and keeps retrying in the background, so a host
   * may register it anyway.
   */
  connect(): Promise<void> {
    return this.#supervisor.connect()
  }

  /** Idempotent: closes the session and stops the child (SIGTERM when it ignores stdin EOF). */
  dispose(): Promise<void> {
    this.#listeners.dispose()
    this.#unobserve()
    this.#lifetime.abort(new SeamError('PROVIDER_UNAVAILABLE', `McpToolService "${this.id}" was disposed`))
    return this.#supervisor.dispose().finally(() => this.#oauth?.dispose())
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }

  async schema(_scope: string): Promise<ToolSchema[]> {
    const connection = await this.#supervisor.current(false)
    let entry = this.#cache
    if (!entry || entry.connection !== connection || entry.epoch !== this.#epoch) {
      const fresh = { connection, epoch: this.#epoch, schemas: this.#list(connection) }
      fresh.schemas.catch(() => {
        if (this.#cache === fresh) this.#cache = undefined
      })
      this.#cache = entry = fresh
    }
    return [...(await entry.schemas)]
  }

  /** Whether calls can reach the server right now. */
  isAvailable(_scope: string, _toolName: string): boolean {
    return this.#supervisor.status === 'connected'
  }

  /**
   * One `tools/call`. Success carries `structuredContent` when the tool sent one, else its MCP content
   * blocks. Failures are values (see `call-result.ts`); only an abort of `context.signal` throws, with
   * the signal's reason, so the caller can tell its own cancellation from a timeout
   * (`metadata.code: 'timeout'`). The abort sends `notifications/cancelled` to the server.
   */
  async execute(
    _scope: string,
    toolName: string,
    input: unknown,
    context?: ToolInvocationContext,
  ): Promise<ToolExecutionResult> {
    const signal = context?.signal
    signal?.throwIfAborted()
    const args = input ?? {}
    if (typeof args !== 'object' || Array.isArray(args)) {
      return { success: false, error: 'MCP tool arguments must be a JSON object', metadata: { code: 'invalid_arguments' } }
    }
    const remote = remoteName(toolName, this.#options.prefix)
    if (remote === undefined || !TOOL_NAME.test(remote)) {
      return { success: false, error: `${JSON.stringify(toolName.slice(0, 80))} is not a tool of MCP server "${this.id}"`, metadata: { code: 'unknown_tool' } }
    }
    let connection: McpConnection
    try {
      const current = this.#supervisor.connection ?? (await untilAborted(this.#supervisor.current(), signal))
      if (current === ABORTED) throw signal!.reason
      connection = current
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      // Down: the call never reached the server. A coded fault, so the outcome says PROVIDER_UNAVAILABLE.
      if (SeamError.is(error, 'PROVIDER_UNAVAILABLE')) throw error
      throw new SeamError('PROVIDER_UNAVAILABLE', messageOf(error), { cause: error, details: { provider: this.id, status: this.status } })
    }
    // The request's span; its trace context rides in `_meta`, so the server's spans join this trace.
    const parent = parentFor(context?.trace, contexts.active())
    const span = startRequestSpan('client', toolName, parent, this.id)
    // Always with a progress token (the SDK sends one only with `onprogress`): the server's reports
    // reach the turn, and with `maxTimeoutMs` each restarts the deadline, up to that in all.
    const report = context?.progress
    const onprogress = (progress: { progress: number; total?: number; message?: string }) => {
      try {
        report?.({ done: progress.progress, total: progress.total, message: progress.message === undefined ? undefined : this.#redact(progress.message) })
      } catch {
        // A report the runtime refuses (a count that went down) is dropped; the call goes on.
      }
    }
    // Inside a root the pipeline's own deadline (the same timeoutMs and maxTimeoutMs) ends the call
    // as TOOL_TIMEOUT and aborts this request; the SDK's timer is the backstop for a direct
    // execute, a little later, so the two never race to settle one call two ways.
    const max = this.#maxTimeoutMs
    const timeout = this.#timeoutMs + SDK_TIMER_GRACE_MS
    const timing = max === undefined ? { timeout } : { timeout, resetTimeoutOnProgress: true, maxTotalTimeout: max + SDK_TIMER_GRACE_MS }
    // A call the server makes a task has the same deadline, and asks its questions as this call's own.
    const task = {
      deadline: Date.now() + timeout,
      stop: this.#lifetime.signal,
      ask: (params: ElicitRequestParams, asking: AbortSignal) => askThrough(context, params, asking, this.#redact),
      // Its questions are its own: it no longer counts among the calls a server's question may belong to.
      onTask: () => context !== undefined && this.#running.delete(context),
    }
    if (context !== undefined) this.#running.add(context)
    try {
      const result = await connection.callTool(remote, args as Record<string, unknown>, { signal, onprogress, ...timing }, traceMeta(trace.setSpan(parent, span)), task)
      const mapped = fromCallResult(toolName, result, this.#redact)
      endRequestSpan(span, mapped.success ? undefined : 'tool_error')
      return mapped
    } catch (error) {
      endRequestSpan(span, signal?.aborted ? 'cancelled' : 'request_failed')
      if (signal?.aborted) throw signal.reason
      connection.suspect(error)
      return fromCallError(error, {
        serverId: this.id,
        toolName,
        timeoutMs: this.#timeoutMs,
        redact: this.#redact,
      })
    } finally {
      if (context !== undefined) this.#running.delete(context)
    }
  }

  /**
   * The server asks the user something. MCP does not say which of its requests a question belongs
   * to, so it is forwarded (as the call's own `ask`, journaled in its turn; see `askThrough`) only
   * while exactly one call to this server is in flight; with none or several the answer is
   * `decline`: a question must never reach the person behind another turn.
   */
  #elicit(params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult> {
    const [only, other] = this.#running
    return askThrough(other === undefined ? only : undefined, params, signal, this.#redact)
  }

  /**
   * The server's resources (`resources/list`, every page), as a `ResourceService`: register the
   * service with `registerResourceService` too to project them. Rejects with `PROVIDER_UNAVAILABLE`
   * while the server is down; a server without resources lists none.
   */
  async list(_scope: string): Promise<ResourceDescriptor[]> {
    return (await this.#resources()).resources
  }

  /** The server's resource templates (`resources/templates/list`). */
  async templates(_scope: string): Promise<ResourceTemplateDescriptor[]> {
    return (await this.#resources()).templates
  }

  /** One `resources/read` under `context.signal`; the server's contents as it sent them (text or blobs). */
  async read(_scope: string, uri: string, context?: { signal?: AbortSignal }): Promise<ResourceContents[]> {
    const connection = await this.#supervisor.current(false)
    return readContents(connection, uri, context?.signal, this.#timeoutMs)
  }

  /**
   * The server's prompts as skills (`prompts/list`), as a `SkillService`: register the service
   * with `registerSkillService` too. A prompt's instructions are its text messages without arguments.
   */
  async catalog(_scope: string): Promise<{ name: string; description: string }[]> {
    const connection = await this.#supervisor.current(false)
    return promptCatalog(connection, this.id, this.#options.prefix)
  }

  async describe(_scope: string, skillId: string): Promise<string> {
    const connection = await this.#supervisor.current(false)
    return promptInstructions(connection, skillId, this.#options.prefix, this.#timeoutMs)
  }

  async #resources(): Promise<{ resources: ResourceDescriptor[]; templates: ResourceTemplateDescriptor[] }> {
    const connection = await this.#supervisor.current(false)
    return listResources(connection, this.id, this.#redact)
  }

  onDidChange(listener: () => void): () => void {
    return this.#listeners.onDidChange(listener)
  }

  async #list(connection: McpConnection): Promise<readonly ToolSchema[]> {
    let tools: unknown[]
    try {
      tools = await connection.listTools()
    } catch (error) {
      connection.suspect(error)
      throw new SeamError(
        'PROVIDER_UNAVAILABLE',
        `MCP server "${this.id}" could not list its tools: ${safeMessage(error, this.#redact)}`,
        { cause: redactedError(error, this.#redact), details: { provider: this.id, status: this.status } },
      )
    }
    const { concurrencySafe, prefix, include, exclude, approval, trustAnnotations } = this.#options
    const { schemas, notes } = mapTools(tools, { serverId: this.id, concurrencySafe, prefix, include, exclude, approval, trustAnnotations })
    this.#notes = notes.map(this.#redact)
    // The pipeline's deadline for these calls: the one given here, extended by progress as the request's is.
    const { timeoutMs, maxTimeoutMs } = this.#options
    const timed = timeoutMs === undefined && maxTimeoutMs === undefined ? schemas : schemas.map((schema) => ({ ...schema, ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(maxTimeoutMs === undefined ? {} : { maxTimeoutMs }) }))
    return Object.freeze(timed.map(deepFreeze))
  }

  #statusChanged(): void {
    this.#listeners.statusChanged(() => this.providerStatus)
  }

  /** Drops the cached list now and tells listeners once the burst is over. */
  #changed(): void {
    this.#epoch++
    this.#cache = undefined
    if (this.status === 'disposed') return
    this.#listeners.changed()
  }
}

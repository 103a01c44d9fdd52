import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  type ElicitRequestParams,
  type ElicitResult,
  type McpSubscription,
  type PriorDiscovery,
  type RequestOptions,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { withoutSecrets } from '../../runtime/base/secret-env.js'
import { isConnectionFailure } from './call-result.js'
import { type StoredOAuthProvider, singleRefresh } from './oauth.js'
import { isStdioTransport, type McpProtocolChoice, type McpTransportOptions } from './options.js'
import { keepProgressOrder } from './progress-order.js'
import type { Redactor } from './redact.js'
import { heldAbort, TaskHandles } from './task-handles.js'
import { followTask, TASKS_EXTENSION, type TaskFollowing } from './tasks.js'

/**
 * One live MCP client session: a spawned child or an HTTP session, from handshake to close. It never
 * reconnects; it reports its own loss once and the supervisor replaces it with a fresh one.
 */

export interface ConnectionSettings {
  transport: McpTransportOptions
  /** Bounds the handshake, `tools/list` and health probes. */
  setupTimeoutMs: number
  redact: Redactor
  /** Which revision to speak: `auto` negotiates the newest the server supports. */
  protocol: McpProtocolChoice
  /** The server's OAuth client (HTTP only): the transport sends its token and answers 401 and 403 with it. */
  oauth?: StoredOAuthProvider
  /** Calls to a 2026-07-28 HTTP server serving the tasks extension may become tasks (`McpToolServiceOptions.tasks`, default on). */
  tasks?: boolean
}

/** How a call that becomes a task is followed (`followTask`), besides the call's own signal. */
export interface TaskCall extends Omit<TaskFollowing, 'signal'> {
  /** The server made the call a task. */
  onTask?(): void
}

export interface ConnectionHooks {
  /** The server sent `notifications/tools/list_changed` (unsolicited, or on a `subscriptions/listen` stream). */
  onToolsChanged(): void
  /** The child exited or a health probe failed; called at most once, never after `close()`. */
  onLost(reason: string): void
  /** The server asks the user something (see `McpToolService`): the answer to send back. */
  onElicit(params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult>
}

/** A stopped child gets this long to exit on stdin EOF before it is sent SIGTERM. */
const KILL_GRACE_MS = 250
const TERMINATE_SESSION_MS = 500
const STDERR_TAIL_CHARS = 2_048
const PROBE_TIMEOUT_MS = 5_000
/** Form elicitation is declared: a server's question reaches the person behind the call's turn. */
const CAPABILITIES = { elicitation: { form: {} } } as const

type ClientTransport = StdioClientTransport | StreamableHTTPClientTransport

export class McpConnection {
  readonly #client: Client
  readonly #transport: ClientTransport
  readonly #settings: ConnectionSettings
  readonly #hooks: ConnectionHooks
  #state: 'opening' | 'open' | 'lost' | 'closed' = 'opening'
  #stderrTail = ''
  #probe: Promise<void> | undefined
  #closing: Promise<void> | undefined
  #pid: number | undefined
  #subscription: McpSubscription | undefined
  /** The task handles of calls to a server that serves the tasks extension (HTTP only; see `TaskHandles`). */
  #tasks: TaskHandles | undefined

  constructor(client: Client, transport: ClientTransport, settings: ConnectionSettings, hooks: ConnectionHooks) {
    this.#client = client
    this.#transport = transport
    this.#settings = settings
    this.#hooks = hooks
  }

  /** Spawns or dials the server and completes the MCP handshake; cleans up after itself on failure. */
  static async open(settings: ConnectionSettings, hooks: ConnectionHooks, signal?: AbortSignal, prior?: PriorDiscovery): Promise<McpConnection> {
    try {
      return await McpConnection.#open(settings, hooks, signal, prior)
    } catch (error) {
      // A 401 that started a sign-in: once the person is back and the code redeemed, dial again.
      if (!settings.oauth?.signingIn || isStdioTransport(settings.transport)) throw error
      await settings.oauth.finishSignIn(new URL(settings.transport.url))
      return McpConnection.#open(settings, hooks, signal, prior)
    }
  }

  static async #open(settings: ConnectionSettings, hooks: ConnectionHooks, signal?: AbortSignal, prior?: PriorDiscovery): Promise<McpConnection> {
    const client = new Client({ name: 'seam-runtime', version: '0.1.0' }, { listMaxPages: 50, versionNegotiation: negotiation(settings), capabilities: CAPABILITIES })
    const connection = new McpConnection(client, createTransport(settings), settings, hooks)
    try {
      await connection.#start(signal, prior)
      return connection
    } catch (error) {
      await connection.close()
      throw error
    }
  }

  /** The protocol revision the handshake settled on (`2025-11-25`, `2026-07-28`). */
  get protocolVersion(): string | undefined {
    return this.#client.getNegotiatedProtocolVersion()
  }

  /**
   * The era this connection settled on, for the next connection to the same server to start from
   * (no second probe after a crash): the server's `server/discover` answer, or "legacy".
   */
  get prior(): PriorDiscovery | undefined {
    if (this.#client.getProtocolEra() === 'legacy') return { kind: 'legacy' }
    const discover = this.#client.getDiscoverResult()
    return discover === undefined ? undefined : { kind: 'modern', discover }
  }

  /** The child's process id while a stdio server runs. */
  get pid(): number | undefined {
    return this.#state === 'open' ? this.#pid : undefined
  }

  /** Every page of `tools/list`, untouched; the SDK follows `nextCursor` up to 50 pages. */
  async listTools(): Promise<unknown[]> {
    const { tools } = await this.#signedIn(() => this.#client.listTools(undefined, { timeout: this.#settings.setupTimeoutMs }))
    return tools
  }

  /** Every page of `resources/list` and `resources/templates/list`; none when the server has no resources. */
  async listResources(): Promise<{ resources: unknown[]; templates: unknown[] }> {
    if (!this.#client.getServerCapabilities()?.resources) return { resources: [], templates: [] }
    const options = { timeout: this.#settings.setupTimeoutMs }
    const [{ resources }, { resourceTemplates }] = await this.#signedIn(() => Promise.all([this.#client.listResources(undefined, options), this.#client.listResourceTemplates(undefined, options)]))
    return { resources, templates: resourceTemplates }
  }

  readResource(uri: string, options: { signal?: AbortSignal; timeout: number }) {
    return this.#signedIn(() => this.#client.readResource({ uri }, options))
  }

  /** Every page of `prompts/list`; none when the server has no prompts. */
  async listPrompts(): Promise<unknown[]> {
    if (!this.#client.getServerCapabilities()?.prompts) return []
    const { prompts } = await this.#signedIn(() => this.#client.listPrompts(undefined, { timeout: this.#settings.setupTimeoutMs }))
    return prompts
  }

  getPrompt(name: string, options: { timeout: number }) {
    return this.#signedIn(() => this.#client.getPrompt({ name }, options))
  }

  /**
   * `tools/call`; an abort of `signal` (or the timeout) sends `notifications/cancelled` to the server.
   * `meta` (the caller's W3C trace context) travels as the request's `_meta`. With `task`, a call to
   * a 2026-07-28 server that serves the tasks extension declares it (in the request's `_meta`), and
   * a call the server makes a task is followed to its result (`followTask`): the SDK's request
   * carries everything else (progress, input rounds, parameter headers, sign-in) as for any call.
   */
  async callTool(name: string, args: Record<string, unknown>, options: RequestOptions, meta?: Record<string, string>, task?: TaskCall): Promise<CallToolResult> {
    const params = meta ? { name, arguments: args, _meta: meta } : { name, arguments: args }
    const transport = this.#settings.transport
    const handles = this.#tasks
    const modern = this.#client.getProtocolEra() === 'modern'
    if (task === undefined || handles === undefined || isStdioTransport(transport) || !modern || !servesTasks(this.#client.getServerCapabilities())) {
      return this.#signedIn(() => this.#client.callTool(params, options), options.signal) as Promise<CallToolResult>
    }
    const slot = handles.declare()
    // A cancel is held back while the task handle may still be on its way (see `heldAbort`).
    const held = heldAbort(options.signal, () => slot.created !== undefined)
    try {
      const declared = { ...params, _meta: { ...meta, [CLIENT_CAPABILITIES_META_KEY]: slot.capabilities } }
      return (await this.#signedIn(() => this.#client.callTool(declared, { ...options, signal: held.signal }), options.signal)) as CallToolResult
    } catch (error) {
      // The SDK refused the answer because it was a task handle: the call goes on as that task (a
      // cancelled call's task is cancelled at once).
      const created = slot.created
      if (created === undefined) throw options.signal?.aborted ? options.signal.reason : error
      task.onTask?.()
      const target = { url: transport.url, headers: transport.headers, capabilities: slot.capabilities, ...bearerOf(this.#settings.oauth) }
      return await followTask(target, created, { ...task, signal: options.signal })
    } finally {
      held.dispose()
      handles.release(slot)
    }
  }

  /**
   * A request that met a 401 the token could not answer, or a step-up (403 insufficient_scope),
   * started a sign-in: once the person is back and the code redeemed, it runs once more. A 401
   * that survives a refresh may mean the server moved to another authorization server: the cached
   * discovery is dropped and the request tried again (which may start that sign-in). A call's
   * `signal` ends its wait for the person (and, the last one gone, the sign-in).
   */
  async #signedIn<T>(request: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const { oauth, transport } = this.#settings
    if (!oauth || isStdioTransport(transport)) return request()
    let rediscovered = false
    for (let attempt = 0; ; attempt++) {
      try {
        return await request()
      } catch (error) {
        if (attempt >= 2) throw error
        if (oauth.signingIn) {
          await oauth.finishSignIn(new URL(transport.url), undefined, signal)
        } else if (!rediscovered && isAuthRefusal(error)) {
          rediscovered = true
          await oauth.invalidateCredentials('discovery')
        } else {
          throw error
        }
      }
    }
  }

  /** After a suspicious failure, pings the server; a ping that fails the same way marks it lost. */
  suspect(error: unknown): void {
    // A sign-in in progress is not a dead server; a probe would only start a second one.
    if (this.#state !== 'open' || this.#probe || this.#settings.oauth?.signingIn || !isConnectionFailure(error)) return
    this.#probe = this.#client
      .ping({ timeout: Math.min(this.#settings.setupTimeoutMs, PROBE_TIMEOUT_MS) })
      .then(
        () => undefined,
        (failure: unknown) => {
          if (isConnectionFailure(failure) || isTimeout(failure)) this.#lose('the server stopped answering')
        },
      )
      .finally(() => {
        this.#probe = undefined
      })
  }

  /** Idempotent. Ends the session; a child that does not exit on stdin EOF is sent SIGTERM. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown()
    return this.#closing
  }

  async #start(signal: AbortSignal | undefined, prior: PriorDiscovery | undefined): Promise<void> {
    const transport = this.#transport
    if (transport instanceof StdioClientTransport) {
      transport.stderr?.on('data', (chunk: Buffer | string) => {
        this.#stderrTail = (this.#stderrTail + chunk.toString()).slice(-STDERR_TAIL_CHARS)
      })
    }
    this.#client.onclose = () => this.#lose()
    this.#client.onerror = (error) => this.suspect(error)
    this.#client.setRequestHandler('elicitation/create', (request, ctx) => this.#hooks.onElicit(request.params, ctx.mcpReq.signal))
    this.#client.setNotificationHandler('notifications/tools/list_changed', () => {
      if (this.#state === 'open') this.#hooks.onToolsChanged()
    })
    await this.#client.connect(transport, { timeout: this.#settings.setupTimeoutMs, signal, ...(prior ? { prior } : {}) })
    keepProgressOrder(transport)
    if (this.#settings.tasks !== false && transport instanceof StreamableHTTPClientTransport) {
      this.#tasks = new TaskHandles(CAPABILITIES, TASKS_EXTENSION)
      this.#tasks.watch(transport)
    }
    if (transport instanceof StdioClientTransport) this.#pid = transport.pid ?? undefined
    await this.#listen()
    if (this.#state === 'opening') this.#state = 'open'
    else throw new Error(this.#exitReason())
  }

  /**
   * A 2026-07-28 server sends no unsolicited `list_changed`: the changes come on a
   * `subscriptions/listen` stream, dispatched to the same notification handler. A stream the
   * server ends (or that drops) means the changes would go unheard: the connection counts as lost
   * and the supervisor opens a fresh one (which lists the tools again).
   */
  async #listen(): Promise<void> {
    if (this.#client.getProtocolEra() !== 'modern' || !this.#client.getServerCapabilities()?.tools?.listChanged) return
    const subscription = await this.#client.listen({ toolsListChanged: true }, { timeout: this.#settings.setupTimeoutMs })
    this.#subscription = subscription
    void subscription.closed.then((how) => {
      if (how !== 'local') this.#lose('the server ended the tools/list_changed subscription')
    })
  }

  /** Without a reason, the transport closed under us: the reason is read from the child's exit. */
  #lose(reason?: string): void {
    if (this.#state === 'opening') this.#state = 'lost'
    if (this.#state !== 'open') return
    this.#state = 'lost'
    // Let the child's last stderr bytes drain through the pipe before the reason is read.
    setImmediate(() => this.#hooks.onLost(reason ?? this.#exitReason()))
  }

  #exitReason(): string {
    if (!(this.#transport instanceof StdioClientTransport)) return 'the connection closed'
    const tail = this.#stderrTail.trim().split('\n').slice(-5).join(' | ')
    return tail ? `${EXITED}; stderr: ${this.#settings.redact(tail)}` : EXITED
  }

  async #shutdown(): Promise<void> {
    this.#state = 'closed'
    const transport = this.#transport
    const pid = transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      await Promise.race([transport.terminateSession().catch(() => {}), delay(TERMINATE_SESSION_MS)])
    }
    await this.#subscription?.close().catch(() => {})
    const closed = this.#client.close().then(
      () => true,
      () => true,
    )
    if (pid !== undefined && !(await Promise.race([closed, delay(KILL_GRACE_MS).then(() => false)]))) {
      try {
        process.kill(pid, 'SIGTERM')
      } catch {
        // Already gone.
      }
    }
    await closed
  }
}

const EXITED = 'the server process exited'

/**
 * `auto`: a `server/discover` probe, then `initialize` when the server does not answer it as a
 * 2026-07-28 server. Over stdio the SDK probes in a short-lived sibling process (one more spawn),
 * and a silent server counts as a 2025 one after the probe's timeout. A pinned revision never probes.
 */
function negotiation(settings: ConnectionSettings): VersionNegotiationOptions {
  if (settings.protocol === '2025-11-25') return { mode: 'legacy' }
  if (settings.protocol === '2026-07-28') return { mode: { pin: '2026-07-28' } }
  return { mode: 'auto', probe: { timeoutMs: Math.min(settings.setupTimeoutMs, PROBE_TIMEOUT_MS) } }
}

function createTransport(settings: ConnectionSettings): ClientTransport {
  const options = settings.transport
  if (isStdioTransport(options)) {
    return new StdioClientTransport({
      command: options.command,
      args: [...(options.args ?? [])],
      env: { ...withoutSecrets(process.env, options.passEnv).env, ...options.env },
      cwd: options.cwd,
      stderr: 'pipe',
    })
  }
  return new StreamableHTTPClientTransport(new URL(options.url), {
    requestInit: { headers: { ...options.headers } },
    ...(settings.oauth ? { authProvider: settings.oauth, fetch: singleRefresh() } : {}),
  })
}

/** The mount's bearer token for the task requests `followTask` makes itself. */
function bearerOf(oauth: StoredOAuthProvider | undefined): { authorization?: () => Promise<string | undefined> } {
  if (oauth === undefined) return {}
  return {
    authorization: async () => {
      const token = (await oauth.tokens())?.access_token
      return token ? `Bearer ${token}` : undefined
    },
  }
}

/** The server still answers 401 after the transport's own re-authorization. */
function isAuthRefusal(error: unknown): boolean {
  if (UnauthorizedError.isInstance(error)) return true
  return SdkError.isInstance(error) && error.code === SdkErrorCode.ClientHttpAuthentication
}

function servesTasks(capabilities: unknown): boolean {
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions
  return typeof extensions === 'object' && extensions !== null && extensions[TASKS_EXTENSION] !== undefined
}

function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'REQUEST_TIMEOUT'
}

function delay(ms: number): Promise<false> {
  return new Promise((resolve) => setTimeout(() => resolve(false), ms).unref())
}

import type { ElicitRequestParams, ElicitResult } from '@modelcontextprotocol/client'
import { SeamError } from '../../errors.js'
import type { PriorDiscovery } from '@modelcontextprotocol/client'
import { backoffDelay } from './backoff.js'
import { type ConnectionSettings, McpConnection } from './connection.js'
import type { McpReconnectOptions } from './options.js'
import { safeMessage } from './redact.js'

/**
 * Keeps at most one live `McpConnection` and replaces it when it is lost, retrying with exponential
 * backoff until disposed. It owns the status the service reports: the tools of a server that is
 * not `connected` are unavailable, never half-there.
 */

export type McpServiceStatus = 'idle' | 'connecting' | 'connected' | 'down' | 'disposed'

export interface SupervisorHooks {
  /** The live server announced `notifications/tools/list_changed`. */
  onToolsChanged(): void
  /** The tool set appeared or vanished: a connection was lost, or came back after being down. */
  onAvailabilityChanged(): void
  /** Any change of `status` (and of the diagnostic or retry time that go with it). */
  onStatus(): void
  /** The server asks the user something (`elicitation/create`, or a 2026-07-28 input request). */
  onElicit(params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult>
}

export interface SupervisorSettings extends ConnectionSettings {
  serverId: string
  reconnect?: McpReconnectOptions
}

export class ConnectionSupervisor {
  readonly #settings: SupervisorSettings
  readonly #hooks: SupervisorHooks
  readonly #lifetime = new AbortController()
  #status: McpServiceStatus = 'idle'
  #connection: McpConnection | undefined
  /** The era the last connection settled on: a reconnection starts from it instead of probing again. */
  #prior: PriorDiscovery | undefined
  #attempt: Promise<McpConnection> | undefined
  /** The attempt in flight was started by a retry, not by `connect()`'s first try. */
  #attemptIsRetry = false
  #retryTimer: NodeJS.Timeout | undefined
  /** When the scheduled retry starts (epoch ms), while down. */
  #retryAt: number | undefined
  #retries = 0
  #diagnostic: string | undefined
  #disposing: Promise<void> | undefined

  constructor(settings: SupervisorSettings, hooks: SupervisorHooks) {
    this.#settings = settings
    this.#hooks = hooks
  }

  get status(): McpServiceStatus {
    return this.#status
  }

  /** Why the server is down (or why the last attempt failed); redacted. */
  get diagnostic(): string | undefined {
    return this.#diagnostic
  }

  /** While down, when the next attempt starts (epoch ms). */
  get retryAt(): number | undefined {
    return this.#status === 'down' ? this.#retryAt : undefined
  }

  /** The live connection, when there is one. */
  get connection(): McpConnection | undefined {
    return this.#status === 'connected' ? this.#connection : undefined
  }

  /** Connects now (also cutting a pending backoff short). Rejects with PROVIDER_UNAVAILABLE on failure. */
  async connect(): Promise<void> {
    if (this.#status === 'disposed') throw this.#closed()
    if (this.#status === 'connected') return
    if (this.#attempt) {
      await this.#attempt
      return
    }
    clearTimeout(this.#retryTimer)
    await this.#startAttempt()
  }

  /**
   * The live connection; connects first when nothing has tried yet (a registered provider need not
   * be connected by hand); waits for an attempt in flight; otherwise rejects with
   * PROVIDER_UNAVAILABLE. With `waitForRetry: false`, a reconnection attempt (after the server was
   * lost or first failed) is not waited for: a generation being built leaves the tools out at once
   * rather than stalling on a server that may hang for the whole setup timeout, and the
   * reconnection announces them.
   */
  current(waitForRetry = true): Promise<McpConnection> {
    if (this.#status === 'disposed') return Promise.reject(this.#closed())
    if (this.#connection && this.#status === 'connected') return Promise.resolve(this.#connection)
    if (this.#status === 'idle') return this.#startAttempt()
    if (this.#attempt && (waitForRetry || !this.#attemptIsRetry)) return this.#attempt
    return Promise.reject(this.unavailable())
  }

  /** The error for "this server cannot be used right now". */
  unavailable(): SeamError {
    const { serverId } = this.#settings
    const why = `${this.#diagnostic ?? 'no connection'}; retrying`
    return new SeamError('PROVIDER_UNAVAILABLE', `MCP server "${serverId}" is not connected (${this.#status}): ${why}`, {
      details: { provider: serverId, status: this.#status },
      hint: 'Its tools are left out until the server is reachable again.',
    })
  }

  /** Idempotent: stops retrying, aborts a handshake in flight and closes the live connection. */
  dispose(): Promise<void> {
    if (!this.#disposing) {
      this.#status = 'disposed'
      clearTimeout(this.#retryTimer)
      this.#lifetime.abort()
      const connection = this.#connection
      this.#connection = undefined
      this.#disposing = Promise.allSettled([connection?.close(), this.#attempt]).then(() => undefined)
      this.#hooks.onStatus()
    }
    return this.#disposing
  }

  #startAttempt(): Promise<McpConnection> {
    const recovering = this.#status === 'down'
    this.#attemptIsRetry = recovering
    this.#status = 'connecting'
    this.#hooks.onStatus()
    let live: McpConnection | undefined
    const hooks = {
      onToolsChanged: () => {
        if (live && live === this.#connection) this.#hooks.onToolsChanged()
      },
      onLost: (reason: string) => {
        if (live) this.#onLost(live, reason)
      },
      onElicit: (params: ElicitRequestParams, signal: AbortSignal) => this.#hooks.onElicit(params, signal),
    }
    const attempt = McpConnection.open(this.#settings, hooks, this.#lifetime.signal, this.#prior).then(
      (connection) => {
        live = connection
        this.#prior = connection.prior
        if (this.#status === 'disposed') {
          void connection.close()
          throw this.#closed()
        }
        this.#attempt = undefined
        this.#connection = connection
        this.#status = 'connected'
        this.#retries = 0
        this.#diagnostic = undefined
        this.#hooks.onStatus()
        if (recovering) this.#hooks.onAvailabilityChanged()
        return connection
      },
      (error: unknown) => {
        if (this.#status === 'disposed') throw this.#closed()
        this.#attempt = undefined
        this.#status = 'down'
        this.#diagnostic = `connecting failed: ${safeMessage(error, this.#settings.redact)}`
        this.#scheduleRetry()
        this.#hooks.onStatus()
        throw this.unavailable()
      },
    )
    this.#attempt = attempt
    return attempt
  }

  #onLost(connection: McpConnection, reason: string): void {
    if (connection !== this.#connection || this.#status !== 'connected') return
    this.#connection = undefined
    this.#status = 'down'
    this.#diagnostic = `connection lost: ${reason}`
    void connection.close()
    this.#scheduleRetry()
    this.#hooks.onStatus()
    this.#hooks.onAvailabilityChanged()
  }

  #scheduleRetry(): void {
    const delay = backoffDelay(this.#retries++, this.#settings.reconnect)
    this.#retryAt = Date.now() + delay
    clearTimeout(this.#retryTimer)
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined
      if (this.#status === 'down') this.#startAttempt().catch(() => {})
    }, delay).unref()
  }

  #closed(): SeamError {
    return new SeamError('CLOSED', `MCP server "${this.#settings.serverId}" has been disposed`, {
      details: { provider: this.#settings.serverId },
    })
  }
}

import { SeamError } from '../../errors.js'
import type { ApprovalMode } from '../../seams/types.js'
import type { McpOAuthOptions } from './oauth.js'

/**
 * The options a host gives `McpToolService`, the defaults it falls back to, and the checks they must
 * pass. Values in `env` and `headers` are treated as secrets: they never appear in errors or diagnostics.
 */

/** Spawn a local MCP server and talk to it over its stdin/stdout. */
export interface McpStdioTransportOptions {
  command: string
  args?: readonly string[]
  /**
   * Set in the child's environment as given (the host chose these values). The rest of the child's
   * environment is the host's, minus every variable that looks like a credential (`*TOKEN*`,
   * `*KEY*`, `*SECRET*`, URLs with a password…, the rule `run_command` applies).
   */
  env?: Readonly<Record<string, string>>
  /** Host variables the child gets even though they look like credentials (`['GITHUB_TOKEN']`). */
  passEnv?: readonly string[]
  cwd?: string
}

/** Reach a remote MCP server over streamable HTTP. */
export interface McpHttpTransportOptions {
  url: string | URL
  headers?: Readonly<Record<string, string>>
}

export type McpTransportOptions = McpStdioTransportOptions | McpHttpTransportOptions

export interface McpReconnectOptions {
  /** Delay before the first retry after a drop; doubles after every failed attempt. Default 100 ms. */
  initialDelayMs?: number
  /** Upper bound for the retry delay. Default 5 s. */
  maxDelayMs?: number
}

/** Which MCP revision to speak: `auto` (the default) negotiates the newest the server supports. */
export type McpProtocolChoice = 'auto' | '2025-11-25' | '2026-07-28'

export interface McpToolServiceOptions {
  /** Provider id; tools carry `source: 'mcp:<id>'`. */
  id: string
  description?: string
  transport: McpTransportOptions
  /**
   * Per-call deadline for `tools/call`. Default 60 s. (The handshake and `tools/list` have their own
   * 15 s.) Given, it is also the deadline the pipeline gives these tools' calls.
   */
  timeoutMs?: number
  /**
   * Lets the server's progress extend a call: each `notifications/progress` restarts `timeoutMs`
   * (the SDK's `resetTimeoutOnProgress`), never past this long from the call's start
   * (`maxTotalTimeout`); the pipeline's deadline for these tools extends the same way. Omitted,
   * progress is still forwarded but does not extend the deadline.
   */
  maxTimeoutMs?: number
  /**
   * Which tools may run in parallel batches: `true` for all, `false` for none, or a list of names.
   * Omitted, the tools the server hints are read-only (`readOnlyHint`): a hint may let calls
   * overlap, never skip approval (see `trustAnnotations`).
   */
  concurrencySafe?: boolean | readonly string[]
  reconnect?: McpReconnectOptions
  /**
   * The protocol revision. `auto` (default) probes with `server/discover` and speaks 2026-07-28
   * when the server answers as such, else 2025-11-25 (over stdio the probe costs one more spawn of
   * the server, on the first connection only: reconnections reuse the verdict). A pinned revision
   * skips the probe; `2026-07-28` fails to connect to a server that does not speak it.
   */
  protocol?: McpProtocolChoice
  /**
   * Calls to a 2026-07-28 HTTP server that serves the tasks extension declare it (default on;
   * `false` turns it off): a call the server makes a task (its task-capable tools) is followed with
   * `tasks/get` polls until its result, so it survives a dropped stream or connection, a restarted
   * listener, or a load balancer sending the polls to another host. The call keeps its deadline
   * (`timeoutMs`), its cancel sends `tasks/cancel`, and a question the task asks goes to the
   * call's turn as the call's own. Other calls, and every call to another server, are unchanged.
   */
  tasks?: boolean
  /**
   * Tools are listed as `<prefix>__<name>` (`fs` → `fs__read_text_file`), so two servers (or a
   * server and a local tool) with the same tool name can share a generation. Calls use the server's
   * own name. 1–20 of `[a-zA-Z0-9_-]`.
   */
  prefix?: string
  /** Only the server tools whose name matches one of these patterns (`*` matches any run of characters). */
  include?: readonly string[]
  /** Leaves out the server tools whose name matches one of these patterns; applied after `include`. */
  exclude?: readonly string[]
  /** The approval mode of every tool from this server. Default `'on-risk'`. */
  approval?: ApprovalMode
  /**
   * The server's `readOnlyHint` is a hint from a process the host does not control: by default it
   * changes nothing about approval (an `'on-risk'` tool from this server asks as it would without
   * the hint, session answer offered; the hint is still listed in its annotations). `true` lets a
   * read-only hint skip the question, as it does for local tools.
   */
  trustAnnotations?: boolean
  /**
   * OAuth for a server that requires it (streamable HTTP only): client credentials (secret or
   * `private_key_jwt`) or a person's sign-in (authorization code with PKCE). See `McpOAuthOptions`.
   * Tokens are kept in `auth.store` (memory by default) and never reach logs, errors or the journal.
   */
  auth?: McpOAuthOptions
}

export const DEFAULT_CALL_TIMEOUT_MS = 60_000
export const SETUP_TIMEOUT_MS = 15_000
export const DEFAULT_RECONNECT = { initialDelayMs: 100, maxDelayMs: 5_000 } as const

export function isStdioTransport(transport: McpTransportOptions): transport is McpStdioTransportOptions {
  return typeof (transport as Partial<McpStdioTransportOptions>).command === 'string'
}

/** A description that names the server without its arguments, query string or credentials. */
export function describeTarget(transport: McpTransportOptions): string {
  if (isStdioTransport(transport)) {
    const base = transport.command.split(/[\\/]/).pop() || transport.command
    return `stdio: ${base}`
  }
  try {
    const url = new URL(transport.url)
    return `${url.origin}${url.pathname}`
  } catch {
    return 'http: invalid url'
  }
}

/** The protocol choices `protocol` takes. */
const PROTOCOLS: readonly McpProtocolChoice[] = ['auto', '2025-11-25', '2026-07-28']

/**
 * Throws `INVALID_OPTIONS` for a deadline out of range, a `maxTimeoutMs` below `timeoutMs` (the
 * deadline in force, default or given), a malformed `prefix` or an unknown `protocol`.
 */
export function checkOptions(options: McpToolServiceOptions, timeoutMs: number): void {
  for (const key of ['timeoutMs', 'maxTimeoutMs'] as const) {
    const value = options[key]
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= 0x7fff_ffff)) {
      throw new SeamError('INVALID_OPTIONS', `McpToolService "${options.id}": ${key} must be a positive number of milliseconds up to 2147483647`)
    }
  }
  if (options.maxTimeoutMs !== undefined && options.maxTimeoutMs < timeoutMs) {
    throw new SeamError('INVALID_OPTIONS', `McpToolService "${options.id}": maxTimeoutMs must not be less than timeoutMs (${timeoutMs})`)
  }
  if (options.prefix !== undefined && !/^[a-zA-Z0-9_-]{1,20}$/.test(options.prefix)) {
    throw new SeamError('INVALID_OPTIONS', `McpToolService "${options.id}": prefix must be 1-20 of [a-zA-Z0-9_-], got ${JSON.stringify(options.prefix)}`)
  }
  if (options.protocol !== undefined && !PROTOCOLS.includes(options.protocol)) {
    throw new SeamError('INVALID_OPTIONS', `McpToolService "${options.id}": protocol must be one of ${PROTOCOLS.join(', ')}, got ${JSON.stringify(options.protocol)}`)
  }
}

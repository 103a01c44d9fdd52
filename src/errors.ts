/**
 * One catalog of stable error codes. Outcome codes appear on `ToolCallOutcome.code` (outcomes are
 * values, never thrown); fault codes appear on thrown `SeamError`s (misuse and infrastructure faults).
 */
export const ErrorCode = {
  // ── Outcome codes (ToolCallOutcome.code) ────────────────────────────────────────────────
  /** The tool is not in the turn's capability snapshot (hidden tools are unknown too). */
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  /** The turn's generation (or the provider behind a captured capability) has been retired. */
  GENERATION_RETIRED: 'GENERATION_RETIRED',
  /** The arguments are not valid JSON or do not match the tool's input schema. */
  INVALID_ARGS: 'INVALID_ARGS',
  /** A policy denied the call; `policy` says which (permission, hook, approval, guard). */
  DENIED: 'DENIED',
  /** Approval was required but no answer could be had (no port, unattended, port failed). */
  APPROVAL_UNAVAILABLE: 'APPROVAL_UNAVAILABLE',
  /** Approval was required and the port did not answer within `approvalTimeoutMs`. */
  APPROVAL_TIMEOUT: 'APPROVAL_TIMEOUT',
  /** The tool body, a wrapper or the provider threw or reported a failure. */
  TOOL_ERROR: 'TOOL_ERROR',
  /** The tool's value is not lossless JSON or does not match its output schema. */
  INVALID_OUTPUT: 'INVALID_OUTPUT',
  /** The body did not settle within `timeoutMs` + `graceMs`. */
  TOOL_TIMEOUT: 'TOOL_TIMEOUT',
  /** A post-execute hook blocked the result. */
  POST_BLOCKED: 'POST_BLOCKED',
  /** The call was cancelled after its body started. */
  ABORTED: 'ABORTED',
  /** The call was cancelled before its body started; no policy or body ran after the abort. */
  ABORTED_BEFORE_DISPATCH: 'ABORTED_BEFORE_DISPATCH',
  /** The journal could not record the call; the body never ran. */
  JOURNAL_UNAVAILABLE: 'JOURNAL_UNAVAILABLE',
  /** The process stopped before the call settled; written by crash repair. */
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
  /** Not final (`status: 'suspended'`): the call is parked until a person decides; resume it with its `resumeToken`. */
  APPROVAL_PENDING: 'APPROVAL_PENDING',
  /** A hook, guard, wrapper, permission host or `risk()` did not answer within its stage deadline. */
  POLICY_TIMEOUT: 'POLICY_TIMEOUT',
  /** The turn already used this call id: nothing ran and nothing was journaled for this call. */
  DUPLICATE_CALL: 'DUPLICATE_CALL',
  /** Nothing ran: an earlier call with the same idempotency key ended `OUTCOME_UNKNOWN` and may have run (`details` names it). */
  PRIOR_OUTCOME_UNKNOWN: 'PRIOR_OUTCOME_UNKNOWN',
  /** A nested call (`ctx.tools.call`, a Code Mode sub-call) past the nesting bound (`maxNesting`, default 4): nothing ran. */
  NESTED_CALL_DEPTH: 'NESTED_CALL_DEPTH',
  /** A resumed Code Mode program asked for another sub-call (tool or arguments) than its journal holds at that place: nothing more ran. */
  CODE_DIVERGED: 'CODE_DIVERGED',

  // ── Code Mode run codes (a failed CodeRunResult.code; see docs/code-mode.md) ─────────────
  /** The program does not parse (TypeScript or JavaScript, as the body of an async function). */
  CODE_SYNTAX: 'CODE_SYNTAX',
  /** The program threw (or rejected) and did not catch it, or returned a value that is not JSON. */
  CODE_THREW: 'CODE_THREW',
  /** The run took longer than its wall time (`wallMs`), sub-calls and timers included. */
  CODE_TIMEOUT: 'CODE_TIMEOUT',
  /** The program executed longer than its CPU budget (`cpuMs`); stopped by QuickJS's interrupt handler. */
  CODE_CPU_LIMIT: 'CODE_CPU_LIMIT',
  /** The program needed more memory than `memoryBytes` (or its worker ran out of heap). */
  CODE_MEMORY_LIMIT: 'CODE_MEMORY_LIMIT',
  /** The program's value or a sub-call's arguments exceed `outputBytes`, or its console output `logBytes`. */
  CODE_OUTPUT_LIMIT: 'CODE_OUTPUT_LIMIT',
  /** The program issued more sub-calls than `subCalls`. */
  CODE_SUBCALL_LIMIT: 'CODE_SUBCALL_LIMIT',
  /** The source is longer than `sourceBytes`; nothing ran. */
  CODE_SOURCE_TOO_LARGE: 'CODE_SOURCE_TOO_LARGE',

  // ── Fault codes (thrown SeamError) ──────────────────────────────────────────────────────
  /** The root (or another closable object) has been closed; no further calls are accepted. */
  CLOSED: 'CLOSED',
  /** A plugin definition or a plugin folder is malformed. */
  INVALID_PLUGIN: 'INVALID_PLUGIN',
  /** A tool definition is malformed (bad name, missing execute, bad schema). */
  INVALID_TOOL: 'INVALID_TOOL',
  /** A skill definition or skill file is malformed. */
  INVALID_SKILL: 'INVALID_SKILL',
  /** A skill's `tools:` names a tool its generation does not have (a warning: the skill loads). */
  SKILL_UNKNOWN_TOOL: 'SKILL_UNKNOWN_TOOL',
  /** A provider id is already registered in that scope. */
  DUPLICATE_PROVIDER: 'DUPLICATE_PROVIDER',
  /** Two visible tools or skills share a name in one projection. */
  DUPLICATE_CAPABILITY: 'DUPLICATE_CAPABILITY',
  /** A resource token is provided twice in one plugin tree. */
  DUPLICATE_RESOURCE: 'DUPLICATE_RESOURCE',
  /** A resource token was used but nothing provides it. */
  MISSING_RESOURCE: 'MISSING_RESOURCE',
  /** A turn envelope is malformed. */
  INVALID_TURN: 'INVALID_TURN',
  /** A tool call given to the runtime is malformed (a caller programming error). */
  INVALID_CALL: 'INVALID_CALL',
  /** A call was made after `turn.end()`: refused before anything is journaled (begin a new turn). */
  TURN_ENDED: 'TURN_ENDED',
  /** A plugin's setup threw while building a generation. */
  SETUP_FAILED: 'SETUP_FAILED',
  /** A tool or skill file could not be loaded (syntax error, bad export). */
  LOAD_FAILED: 'LOAD_FAILED',
  /** A candidate generation failed and was rolled back. */
  RELOAD_FAILED: 'RELOAD_FAILED',
  /** One or more disposers failed; the error names each label. */
  DISPOSE_FAILED: 'DISPOSE_FAILED',
  /** A deprecated entry point was called; it fails closed and never reaches a provider. */
  DEPRECATED_API: 'DEPRECATED_API',
  /** A journal file or schema is corrupt or belongs to something else. */
  JOURNAL_CORRUPT: 'JOURNAL_CORRUPT',
  /** A journal event with the same (turn, call, kind) already exists. */
  JOURNAL_DUPLICATE: 'JOURNAL_DUPLICATE',
  /** This host's lease on a shared journal was taken over (fenced) by another host: the store refuses its writes. */
  HOST_FENCED: 'HOST_FENCED',
  /**
   * A remote provider (an MCP server) is not connected. Thrown by the provider; as an outcome code,
   * a call reached a provider that was down, and it never ran.
   */
  PROVIDER_UNAVAILABLE: 'PROVIDER_UNAVAILABLE',
  /** A path resolved outside the allowed roots. */
  PATH_ESCAPE: 'PATH_ESCAPE',
  /** Options given to a host entry point are unsafe or malformed (a non-loopback MCP listener without a token). */
  INVALID_OPTIONS: 'INVALID_OPTIONS',
  /** A listener (the MCP HTTP endpoint) could not bind its host and port. */
  LISTEN_FAILED: 'LISTEN_FAILED',
  /** No turn in the journal has that id (nor, where a short id is accepted, one that starts with it). */
  UNKNOWN_TURN: 'UNKNOWN_TURN',
  /** No parked call has that call id or resume token (never parked, or already settled and gone). */
  UNKNOWN_APPROVAL: 'UNKNOWN_APPROVAL',
  /** A parked call was already decided or settled (by this or another process): the first decision stands. */
  APPROVAL_CONFLICT: 'APPROVAL_CONFLICT',
  /** A parked call's decision deadline (`approvalTtlMs`) passed before this decision: it expired, and nothing runs. */
  APPROVAL_EXPIRED: 'APPROVAL_EXPIRED',
  /** A parked call may be resumed, or its resume token seen, only by its own caller (session, principal, owner) or an operator the host names. */
  APPROVAL_FORBIDDEN: 'APPROVAL_FORBIDDEN',
  /** The retry of an approval round carries other arguments than the parked call it continues: nothing was decided or run. */
  APPROVAL_ARGUMENTS_CHANGED: 'APPROVAL_ARGUMENTS_CHANGED',
  /** A `ctx.progress()` report is malformed (`done` not a finite number ≥ 0, or lower than the last). */
  INVALID_PROGRESS: 'INVALID_PROGRESS',
  /** A `ctx.ask()` question is malformed: no message, or a schema MCP elicitation does not allow (a flat object of string, number, integer, boolean and multi-select fields). */
  INVALID_QUESTION: 'INVALID_QUESTION',
  /** A `ctx.sample()` or `ctx.roots()` request is malformed (no messages, a `maxTokens` that is not a positive integer, a bad `timeoutMs` or `key`). */
  INVALID_CLIENT_REQUEST: 'INVALID_CLIENT_REQUEST',
  /** `ctx.sample()` / `ctx.roots()`: the turn has no client that can answer (no port that samples or lists roots, an unattended turn, or a client that did not declare the capability). */
  CLIENT_UNSUPPORTED: 'CLIENT_UNSUPPORTED',
  /** `ctx.sample()` / `ctx.roots()`: the client refused or failed the request, or did not answer within its `timeoutMs`, or the call was aborted. */
  CLIENT_REQUEST_FAILED: 'CLIENT_REQUEST_FAILED',
} as const

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

/** Codes that may appear on a `ToolCallOutcome`. */
export type OutcomeCode = Extract<
  ErrorCode,
  | 'UNKNOWN_TOOL'
  | 'GENERATION_RETIRED'
  | 'INVALID_ARGS'
  | 'DENIED'
  | 'APPROVAL_UNAVAILABLE'
  | 'APPROVAL_TIMEOUT'
  | 'TOOL_ERROR'
  | 'INVALID_OUTPUT'
  | 'TOOL_TIMEOUT'
  | 'POST_BLOCKED'
  | 'ABORTED'
  | 'ABORTED_BEFORE_DISPATCH'
  | 'JOURNAL_UNAVAILABLE'
  | 'OUTCOME_UNKNOWN'
  | 'APPROVAL_PENDING'
  | 'POLICY_TIMEOUT'
  | 'DUPLICATE_CALL'
  | 'PROVIDER_UNAVAILABLE'
  | 'PRIOR_OUTCOME_UNKNOWN'
  | 'NESTED_CALL_DEPTH'
  | 'CODE_DIVERGED'
  | 'CODE_SYNTAX'
  | 'CODE_THREW'
  | 'CODE_TIMEOUT'
  | 'CODE_CPU_LIMIT'
  | 'CODE_MEMORY_LIMIT'
  | 'CODE_OUTPUT_LIMIT'
  | 'CODE_SUBCALL_LIMIT'
  | 'CODE_SOURCE_TOO_LARGE'
>

export interface SeamErrorOptions {
  cause?: unknown
  /** Extra structured detail (file, line, ids); never secrets. */
  details?: Record<string, unknown>
  /** A one-line suggestion shown by the CLI under the message. */
  hint?: string
}

/** The one error type seam-runtime throws. `code` is stable; `message` is for people. */
export class SeamError extends Error {
  override readonly name = 'SeamError'
  readonly code: ErrorCode
  readonly details: Record<string, unknown> | undefined
  readonly hint: string | undefined

  constructor(code: ErrorCode, message: string, options: SeamErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.details = options.details
    this.hint = options.hint
  }

  static is(error: unknown, code?: ErrorCode): error is SeamError {
    return error instanceof SeamError && (code === undefined || error.code === code)
  }
}

/** The message of any thrown value, for diagnostics. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message
  if (typeof error === 'string') return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    return String(error)
  }
}

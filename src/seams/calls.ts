import type { TraceContext } from './trace.js'
import type { ContentBlock } from './journal.js'
import type { ToolProgress, TurnEnvelope } from './types.js'
import type { ToolCallOutcome } from './outcome.js'

export type { DeferredContext, NestedTools, ToolCallOutcome } from './outcome.js'

/** One model tool call, as the model produced it. */
export interface ToolCall {
  readonly callId: string
  readonly name: string
  /** Raw JSON text (empty → `{}`), or an already-parsed object. */
  readonly arguments: string | Readonly<Record<string, unknown>>
  /** The W3C trace context the call came with (a served MCP request's `_meta`): the body's `ctx.trace`. */
  readonly trace?: TraceContext
  /**
   * A nested call's outer call: its `ToolExecution.token`. Set by the runtime on the calls a tool
   * body (or a Code Mode program) makes through `ctx.tools.call`; a caller's own is ignored.
   */
  readonly parent?: symbol
  /**
   * Told every line the body logs through `ctx.log` (redacted), besides the plugin's own log: a
   * served MCP call forwards them to its client as logging notifications.
   */
  readonly log?: CallLogSink
}

/** One progress report of a running call, as observers hear it (`root.on('progress')`, `onProgress`). */
export interface ProgressEvent extends ToolProgress {
  readonly callId: string
  readonly name: string
  readonly turnId: string
  readonly session: string
  readonly generation: number
  /** Epoch milliseconds of the report. */
  readonly at: number
}

/** What `execute`, `executeBatch` and `resume` take besides the call. */
export interface ExecuteOptions {
  /** Cancels this call (or batch) only; the turn's signal still applies. */
  readonly signal?: AbortSignal
  /** Told of each call's progress (throttled, as `root.on('progress')`); MUST NOT throw or block. */
  readonly onProgress?: (event: ProgressEvent) => void
}

/** Where a call's `ctx.log` lines go besides the plugin's log (see `ToolCall.log`). */
export type CallLogSink = (level: 'debug' | 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void

/** The frozen view of a call that hooks, guards and wrappers receive. */
export interface ToolExecution {
  readonly callId: string
  readonly name: string
  readonly arguments: Readonly<Record<string, unknown>>
  /** Opaque, unique per execution; correlates audit records. */
  readonly token: symbol
  readonly turn: TurnEnvelope
  readonly generation: number
  readonly signal: AbortSignal
  /** A nested call's outer call's `token` (see `ToolCall.parent`); absent on a model's own call. */
  readonly parent?: symbol
}

export type PreDecision = { kind: 'allow' } | { kind: 'deny'; reason: string } | { kind: 'ask'; reason?: string }

export type PostDecision =
  | { kind: 'accept'; content?: ContentBlock[]; value?: unknown; contexts?: DeferredContextInput[] }
  /** `feedback` is what the model sees instead of the result: a sentence, or content blocks. */
  | { kind: 'block'; feedback: string | ContentBlock[]; contexts?: DeferredContextInput[] }

export type DeferredContextInput = string | { id?: string; role?: 'user' | 'system'; content: string }

/** What dispatch produced, before post-execute and normalization. */
export type DispatchResult =
  /** `content`: a provider's own model-facing blocks; without them the value is rendered. */
  | { ok: true; value: unknown; content?: ContentBlock[] }
  /** `unavailable`: the provider was down (it threw `PROVIDER_UNAVAILABLE`), so nothing ran. */
  | { ok: false; error: string; details?: Record<string, unknown>; unavailable?: boolean }

export type PreExecuteHook = (exec: ToolExecution, next: () => Promise<PreDecision>) => PreDecision | Promise<PreDecision>
/** A wrapper may call `next` with a replacement dispatch signal; nothing else can change. */
export type ExecuteWrapper = (
  exec: ToolExecution,
  next: (signal?: AbortSignal) => Promise<DispatchResult>,
) => DispatchResult | Promise<DispatchResult>
export type PostExecuteHook = (
  exec: ToolExecution,
  result: DispatchResult,
  next: () => Promise<PostDecision>,
) => PostDecision | Promise<PostDecision>
export type ResultObserver = (exec: ToolExecution, outcome: ToolCallOutcome) => void
/** A monotonic owner rule: a reason string denies, `undefined` abstains. */
export type Guard = (exec: ToolExecution) => string | undefined | Promise<string | undefined>

export interface PipelineHooks {
  readonly preExecute: readonly PreExecuteHook[]
  readonly execute: readonly ExecuteWrapper[]
  readonly postExecute: readonly PostExecuteHook[]
  readonly result: readonly ResultObserver[]
  readonly guards: readonly Guard[]
}


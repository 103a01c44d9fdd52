import type { TraceContext } from './trace.js'
import type { ClientRoot, QuestionAnswer, QuestionRequest, RootsRequest, SampleRequest, SampleResult, ToolQuestion, ToolRootsQuery, ToolSample } from './questions.js'
/**
 * The Root Capability Seam contracts (seeds/004). A `ToolService` supplies schemas and the final
 * provider call; a `SkillService` is a declarative catalog. Policy metadata on `ToolSchema` is copied
 * into the canonical tool capability by `CapabilityIngress`.
 */

import type { ApprovalPort } from './approval.js'
import type { JournalStore } from './journal.js'
import type { ContentBlock } from './content.js'
import type { NestedTools } from './outcome.js'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** A JSON Schema object (draft-07 or 2020-12). Treated as untrusted input. */
export type JsonSchema = { [key: string]: unknown }

export type ApprovalMode = 'never' | 'on-risk' | 'once' | 'always'

/** Where an idempotency key is unique: one session (and principal), one principal, or everywhere. */
export type IdempotencyScope = 'session' | 'principal' | 'global'
/**
 * What a call does when an earlier call with its idempotency key ended `OUTCOME_UNKNOWN` (a crash
 * while it ran, so it may have run): `'fail'` (default) settles it `PRIOR_OUTCOME_UNKNOWN` without
 * running; `'rerun'` takes the key over and runs the body again, with the same `idempotencyKey`.
 */
export type UnknownOutcomePolicy = 'fail' | 'rerun'
export type OriginScope = 'private' | 'group' | 'channel'

/**
 * MCP's tool annotations: hints about a tool's behaviour, served with it over MCP. From a remote
 * server they are untrusted: `readOnlyHint` skips approval only where the host trusts the server.
 */
export interface ToolAnnotations {
  /** A human-readable name. */
  title?: string
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

export interface ToolSchema {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema }
  /** Omitted → `'on-risk'`. */
  approval?: ApprovalMode
  permissions?: string[]
  platforms?: string[]
  scopes?: OriginScope[]
  hidden?: boolean
  /** Omitted → `'seam:<providerId>'`. */
  source?: string
  annotations?: ToolAnnotations
  /**
   * Whether `annotations.readOnlyHint` counts as risk information for `'on-risk'` approval (a
   * read-only tool does not ask). Default `true`; `McpToolService` sets `false` for a server the
   * host does not trust, so its hint neither skips nor tightens the question.
   */
  trustAnnotations?: boolean
  concurrencySafe?: boolean
  /** A JSON Schema (type `object`) the tool's `output` must match; a value that does not is `INVALID_OUTPUT`. */
  outputSchema?: JsonSchema
  /**
   * Argument names whose values make the call's idempotency key: a later call with the same values
   * (in the `idempotencyScope`, default `'session'`) replays the completed result instead of running.
   */
  idempotencyKey?: string[]
  idempotencyScope?: IdempotencyScope
  /** After a crash left this key's earlier call `OUTCOME_UNKNOWN`; default `'fail'`. */
  onUnknown?: UnknownOutcomePolicy
  /** The call's deadline in milliseconds (default: the turn's, else the root's). */
  timeoutMs?: number
  /** How far progress may extend the deadline, from the call's start (see `defineTool`'s `maxTimeoutMs`). */
  maxTimeoutMs?: number
}

/**
 * What a provider's `execute` resolves to. On success, `content` (model-facing blocks, as an MCP
 * server sends them) becomes the outcome's content as it is, and `output` its JSON value; without
 * `content` the value is rendered as JSON text. Either may be left out, not both.
 */
export type ToolExecutionResult =
  | { success: true; output?: unknown; content?: ContentBlock[]; metadata?: Json }
  | { success: false; error: string; metadata?: Json }

/** A readable principal: who the turn acts for. */
export interface Principal {
  readonly subjectId: string
  readonly roles: readonly string[]
}

/** What a provider learns about the call it executes. */
export interface ToolInvocationContext {
  readonly callId: string
  readonly turnId: string
  readonly session: string
  readonly principal: Principal
  readonly generation: number
  readonly owner: string
  /** Aborted when the call is cancelled or times out; a provider must observe it. */
  readonly signal: AbortSignal
  /** The turn's question port, when it has one (interactive turns only). */
  readonly question?: QuestionPort
  /** The frozen turn envelope (always set by TurnToolRuntime). */
  readonly turn?: TurnEnvelope
  /** The W3C trace context the call came with, to forward (as `McpToolService` does in `_meta`). */
  readonly trace?: TraceContext
  /**
   * Set when the tool has an idempotency key for this call: a stable digest of the key in its scope,
   * the same for every call that shares the key (a rerun after a crash too). Pass it on to an
   * external system that takes one (an `Idempotency-Key` header): only that makes the effect once.
   */
  readonly idempotencyKey?: string
  /**
   * Reports the call's progress, as a tool body's `ctx.progress()` does (always set by
   * TurnToolRuntime). `McpToolService` forwards a mounted server's `notifications/progress` here.
   */
  readonly progress?: (progress: ToolProgress) => void
  /**
   * Asks the person behind the turn a structured question, as a tool body's `ctx.ask()` does
   * (always set by TurnToolRuntime; journaled). `McpToolService` forwards a mounted server's
   * elicitation here.
   */
  readonly ask?: (question: ToolQuestion) => Promise<QuestionAnswer>
  /** Asks the turn's client to sample (`sampling/createMessage`), as a body's `ctx.sample()` does (always set by TurnToolRuntime; journaled). */
  readonly sample?: (request: ToolSample) => Promise<SampleResult>
  /** Asks the turn's client for its roots (`roots/list`), as a body's `ctx.roots()` does (always set by TurnToolRuntime; journaled). */
  readonly roots?: (query?: ToolRootsQuery) => Promise<readonly ClientRoot[]>
  /** Calls other tools of the turn as nested calls of this one (see `NestedTools`; always set by TurnToolRuntime). */
  readonly tools?: NestedTools
}

/**
 * Asks the person (or client) behind a turn: `ask` a free-form question (the `ask_user` tool),
 * `elicit` a structured one from a running tool (`ctx.ask`), `sample` a model completion
 * (`ctx.sample`) or list the client's `roots` (`ctx.roots`). A port has at least one of them; a
 * served MCP call's port reaches its client (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`, or an `input_required` round on a 2026-07-28 request).
 */
export interface QuestionPort {
  ask?(request: { requestId: string; question: string; choices?: string[]; signal: AbortSignal }): Promise<string>
  elicit?(request: QuestionRequest): Promise<QuestionAnswer>
  /** Resolves with the client's result; throws when the client refused or failed (the body's `ctx.sample` rejects `CLIENT_REQUEST_FAILED`). */
  sample?(request: SampleRequest): Promise<SampleResult>
  /** Resolves with the client's roots; throws as `sample` does. */
  roots?(request: RootsRequest): Promise<readonly ClientRoot[]>
}

export interface ToolService {
  readonly id: string
  readonly description: string
  schema(scope: string): ToolSchema[] | Promise<ToolSchema[]>
  execute(scope: string, toolName: string, input: unknown, context?: ToolInvocationContext): Promise<ToolExecutionResult>
  isAvailable?(scope: string, toolName: string): boolean
}

export interface SkillService {
  readonly id: string
  readonly description: string
  catalog(scope: string): Promise<{ name: string; description: string }[]>
  describe(scope: string, skillId: string): Promise<string>
}

/**
 * Implemented by providers whose tool list changes at run time (an MCP server's `list_changed`).
 * The root subscribes while the provider is registered in the active generation and reloads.
 */
export interface ChangeNotifyingService {
  onDidChange(listener: () => void): () => void
}

export function isChangeNotifying(value: unknown): value is ChangeNotifyingService {
  return typeof (value as Partial<ChangeNotifyingService> | null)?.onDidChange === 'function'
}

/** The connection state of a provider that reaches something remote (an MCP server). */
export interface ProviderStatus {
  /** The provider's id. */
  readonly provider: string
  readonly state: 'idle' | 'connecting' | 'connected' | 'down' | 'disposed'
  /** Why it is down, or what its last tool list dropped; never holds secrets. */
  readonly reason?: string
  /** While down: when the next attempt starts (epoch milliseconds). */
  readonly retryAt?: number
}

/**
 * Implemented by providers that connect to something and may be down. The root reports each change
 * as a `provider` event while the provider is registered in the active generation, so a provider
 * that contributes nothing is never silent.
 */
export interface StatusReportingService {
  readonly providerStatus: ProviderStatus
  onStatusChange(listener: (status: ProviderStatus) => void): () => void
}

export function isStatusReporting(value: unknown): value is StatusReportingService {
  return typeof (value as Partial<StatusReportingService> | null)?.onStatusChange === 'function'
}

/** Where a turn comes from; `platform` and `scope` drive tool visibility. */
export interface TurnOrigin {
  readonly kind: string
  readonly platform?: string
  readonly scope?: OriginScope
}

/** Per-turn policy overrides (milliseconds). */
export interface TurnPolicy {
  readonly timeoutMs?: number
  readonly graceMs?: number
  readonly approvalTimeoutMs?: number
  readonly policyTimeoutMs?: number
  readonly maxParallel?: number
}

export interface TurnPorts {
  readonly approval?: ApprovalPort
  readonly question?: QuestionPort
}

/** The frozen identity of one turn, handed to every stage, hook and tool. */
export interface TurnEnvelope {
  readonly turnId: string
  readonly session: string
  readonly principal: Principal
  readonly origin?: TurnOrigin
  readonly owner: string
  readonly unattended: boolean
  readonly policy: TurnPolicy
  readonly signal: AbortSignal
  readonly ports: TurnPorts
  readonly journal: JournalStore
}

/**
 * What a body (or provider) reports with `ctx.progress()`: `done` units of work so far, of `total`
 * when it is known, and a short line for people. `done` never goes down within a call.
 */
export interface ToolProgress {
  readonly done: number
  readonly total?: number
  readonly message?: string
}

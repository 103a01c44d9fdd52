import type { z } from 'zod'
import { SeamError } from '../errors.js'
import { argumentValues } from './skill-argument-values.js'
import type { ContentBlock } from '../seams/journal.js'
import type { ToolProgress } from '../seams/types.js'
import type { ClientRoot, QuestionAnswer, SampleResult, ToolQuestion, ToolRootsQuery, ToolSample } from '../seams/questions.js'
import type { Token } from '../seams/tokens.js'
import type { TurnEnvelope } from '../seams/types.js'
import type { TraceContext } from '../seams/trace.js'
import type { NestedTools } from '../seams/calls.js'
import type { ApprovalMode, IdempotencyScope, JsonSchema, OriginScope, ToolAnnotations, UnknownOutcomePolicy } from '../seams/types.js'

/** A zod object schema, or a JSON Schema object for the tool's arguments. */
export type InputSchema = z.ZodType<Record<string, unknown>> | JsonSchema
/** A zod schema, or a JSON Schema, for the tool's value. */
export type OutputSchema = z.ZodType | JsonSchema

export type InferInput<S> = S extends z.ZodType ? z.output<S> : Record<string, unknown>
export type InferOutput<S> = S extends z.ZodType ? z.output<S> : unknown

/** An MCP client capability a served tool may need (see `ToolSpecBase.clientCapabilities`). */
export type ClientCapabilityName = 'sampling' | 'elicitation' | 'roots'

const CLIENT_CAPABILITIES: readonly string[] = ['sampling', 'elicitation', 'roots']

export interface ToolLogger {
  debug(message: string, fields?: Record<string, unknown>): void
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
}

/** What a tool body receives besides its arguments. */
export interface ToolContext {
  /** Aborted on cancellation or timeout: forward it to owned work. */
  readonly signal: AbortSignal
  readonly callId: string
  readonly turn: TurnEnvelope
  readonly generation: number
  readonly owner: string
  /** The owner's resource in the call's generation; throws `MISSING_RESOURCE` when absent. */
  use<T>(token: Token<T>): T
  /** Delivers a message to the model after the whole batch has committed. */
  deferContext(message: string | { id?: string; role?: 'user' | 'system'; content: string }): void
  /**
   * Reports how far the call has got: observers, the console, OTel span events and a served MCP
   * request's `notifications/progress` hear it (throttled). With `maxTimeoutMs` it also moves the
   * deadline to `timeoutMs` from now. `done` must not go down; a malformed report throws `INVALID_PROGRESS`.
   */
  progress(progress: ToolProgress): void
  /**
   * Asks the person behind the turn a structured question (`schema`: a flat object as MCP
   * elicitation allows) and waits for the answer: `accept` with content that matches the schema,
   * `decline`, or `cancel`. An unattended turn, or one that cannot ask, declines at once; past
   * `timeoutMs` the answer is `cancel`. Every question and answer is journaled.
   */
  ask(question: ToolQuestion): Promise<QuestionAnswer>
  /**
   * Asks the turn's client to sample a model (MCP `sampling/createMessage`: `messages`,
   * `maxTokens`, `systemPrompt`, …) and resolves with its `{ role, content, model, stopReason }`.
   * Rejects `CLIENT_UNSUPPORTED` when the turn's client cannot sample, `CLIENT_REQUEST_FAILED` when
   * it refused, failed or did not answer within `timeoutMs`. Journaled as a question.
   */
  sample(request: ToolSample): Promise<SampleResult>
  /** Asks the turn's client for its roots (MCP `roots/list`); rejects as `sample` does. Journaled as a question. */
  roots(query?: ToolRootsQuery): Promise<readonly ClientRoot[]>
  readonly log: ToolLogger
  /** The W3C trace context the call came with (a served MCP request's `_meta.traceparent` / `tracestate`). */
  readonly trace?: TraceContext
  /**
   * Set when the tool's `idempotencyKey` gave this call a key: a stable digest of the key in its
   * scope, the same for every call that shares it (a rerun after a crash too). Pass it on to an
   * external system that takes one (an `Idempotency-Key` header): only that makes the effect once.
   */
  readonly idempotencyKey?: string
  /**
   * Calls another tool of the turn as a nested call of this one: through the whole pipeline, journaled
   * as its own pair linked to this call, and hidden from the model. Resolves with its outcome.
   */
  readonly tools: NestedTools
}

/** Callbacks use method syntax so a specific `ToolDefinition<I, O>` is a `ToolDefinition`. */
/** What `risk()` may consult besides the arguments. */
export interface RiskContext {
  readonly turn: TurnEnvelope
  readonly owner: string
  /** The owner's resource in the call's generation; throws `MISSING_RESOURCE` when absent. */
  use<T>(token: Token<T>): T
}

/** What `idempotencyKey()` may consult besides the arguments. */
export interface IdempotencyContext extends RiskContext {
  /** The model's id for this call: an agent loop that retries a step after a crash sends it again. */
  readonly callId: string
}

/**
 * Everything of a tool but `execute`. Callbacks use method syntax so a specific
 * `ToolDefinition<I, O>` is a `ToolDefinition`.
 */
export interface ToolSpecBase<I extends InputSchema = InputSchema, O = unknown> {
  description: string
  input: I
  output?: OutputSchema
  /** Model-facing text or content blocks for a completed value (default: JSON text). */
  render?(args: InferInput<I>, value: O): string | ContentBlock[]
  /** Default `'on-risk'`. */
  approval?: ApprovalMode
  /**
   * A reason string when this call is risky; `undefined` when it is not. May look at the owner's
   * resources (does the file exist?) and be async; a throw counts as risky (fail closed).
   */
  risk?(args: InferInput<I>, ctx: RiskContext): string | undefined | Promise<string | undefined>
  permissions?: string[]
  platforms?: string[]
  scopes?: OriginScope[]
  hidden?: boolean
  timeoutMs?: number
  /**
   * Lets progress extend the deadline: each `ctx.progress()` moves it to `timeoutMs` from now, but
   * never past `maxTimeoutMs` from the body's start. Omitted, progress does not move it.
   */
  maxTimeoutMs?: number
  /** The deadline of each policy stage of this tool's calls (hooks, `risk()`, guards); default the root's. */
  policyTimeoutMs?: number
  /** Parallel only when this returns exactly `true`. */
  isConcurrencySafe?(args: InferInput<I>): boolean
  /** Synchronous, total, content-only: runs exactly once for every outcome. */
  finalizeContent?(content: ContentBlock[], outcome: FinalizeInfo): ContentBlock[]
  /** MCP's hints (`readOnlyHint` also counts as risk information for `on-risk` approval); served with the tool. */
  annotations?: ToolAnnotations
  /**
   * The MCP client capabilities a served call needs (`'sampling'`, `'elicitation'`, `'roots'`): a
   * client that did not declare one is refused with `MissingRequiredClientCapability` (`-32021`,
   * HTTP 400) before the call runs. Calls from anywhere but an MCP client are not affected.
   */
  clientCapabilities?: readonly ClientCapabilityName[]
  /**
   * Served over MCP as task-capable (the tasks extension): a client that declared the extension
   * gets a task for each call (`CreateTaskResult`), polled with `tasks/get` from any connection to
   * any host on the journal. `'required'`: a client without the extension is refused (`-32021`).
   * Calls from anywhere but an MCP client are not affected.
   */
  task?: 'optional' | 'required'
  /**
   * When a call of a `task` tool becomes a task (default `'at-once'`: its first request answers with
   * the task). `'after-input'`: a 2026-07-28 call from a tasks-capable client that can be asked runs
   * held first, its questions asked in `input_required` rounds; the request that finds the body not
   * asking (within 100 ms, or done) answers with the task, and the body runs on as the task's run.
   */
  taskStarts?: 'at-once' | 'after-input'
  /**
   * The call's idempotency key (`undefined` or `''`: none). A call whose key already has a completed
   * result in its `idempotencyScope` returns that result from the journal (`replayed: true`) without
   * running; calls with one key running at once run the body once and all get its result. A throw
   * fails the call (`TOOL_ERROR`) rather than running it unguarded.
   */
  idempotencyKey?(args: InferInput<I>, ctx: IdempotencyContext): string | undefined
  /** Where a key is unique (default `'session'`: the same session and principal). */
  idempotencyScope?: IdempotencyScope
  /**
   * When an earlier call with the key ended `OUTCOME_UNKNOWN` (its process died while it ran, so it
   * may have run): `'fail'` (default) settles the call `PRIOR_OUTCOME_UNKNOWN` without running it;
   * `'rerun'` runs the body again, which is safe when it passes `ctx.idempotencyKey` on.
   */
  onUnknown?: UnknownOutcomePolicy
}

export interface ToolSpec<I extends InputSchema = InputSchema, O = unknown> extends ToolSpecBase<I, O> {
  execute(args: InferInput<I>, ctx: ToolContext): O | Promise<O>
}

/** The value a zod `output` makes of what `execute` returns (after its transforms and defaults). */
export type ValueOf<S, O> = S extends z.ZodType ? z.output<S> : O
/** What `execute` must return for a zod `output` (what the schema accepts), else anything. */
export type ResultOf<S, O> = S extends z.ZodType ? z.input<S> : O

/**
 * What `defineTool` accepts: `execute` is a property here, so its parameters are checked strictly
 * against `input` (a method's are bivariant), and it must return what a zod `output` accepts.
 */
export interface CheckedToolSpec<I extends InputSchema, S, O> extends ToolSpecBase<I, ValueOf<S, O>> {
  output?: S & OutputSchema
  execute: (args: InferInput<I>, ctx: ToolContext) => ResultOf<S, O> | Promise<ResultOf<S, O>>
}

export interface FinalizeInfo {
  readonly callId: string
  readonly name: string
  readonly status: 'completed' | 'denied' | 'failed' | 'cancelled' | 'suspended'
  readonly code?: string
}

/** Recognised structurally across module instances (a CommonJS tool bundle may hold its own copy). */
export const TOOL_BRAND = 'seam-runtime/tool@1'

export interface ToolDefinition<I extends InputSchema = InputSchema, O = unknown> extends Readonly<ToolSpec<I, O>> {
  readonly $seam: typeof TOOL_BRAND
}

/**
 * Declares a tool. `input` types `execute`'s arguments; a zod `output` types its result (so the
 * checker catches a value that does not match) and the value `render` sees, wherever `render` sits
 * in the object; without one (or with a JSON Schema `output`) the value type comes from `execute`.
 */
export function defineTool<I extends InputSchema, S extends OutputSchema | undefined = undefined, O = InferOutput<S>>(
  spec: CheckedToolSpec<I, S, O>,
): ToolDefinition<I, ValueOf<S, O>> {
  if (spec === null || typeof spec !== 'object') {
    throw new SeamError('INVALID_TOOL', 'defineTool expects an object')
  }
  if (typeof spec.description !== 'string' || spec.description.trim() === '') {
    throw new SeamError('INVALID_TOOL', 'defineTool: `description` must be a non-empty string')
  }
  if (typeof spec.execute !== 'function') {
    throw new SeamError('INVALID_TOOL', 'defineTool: `execute` must be a function')
  }
  if (spec.input === null || typeof spec.input !== 'object') {
    throw new SeamError('INVALID_TOOL', 'defineTool: `input` must be a zod object or a JSON Schema object')
  }
  if (spec.idempotencyKey !== undefined && typeof spec.idempotencyKey !== 'function') {
    throw new SeamError('INVALID_TOOL', 'defineTool: `idempotencyKey` must be a function of the arguments')
  }
  if (spec.idempotencyScope !== undefined && !['session', 'principal', 'global'].includes(spec.idempotencyScope)) {
    throw new SeamError('INVALID_TOOL', "defineTool: `idempotencyScope` must be 'session', 'principal' or 'global'")
  }
  if (spec.onUnknown !== undefined && spec.onUnknown !== 'fail' && spec.onUnknown !== 'rerun') {
    throw new SeamError('INVALID_TOOL', "defineTool: `onUnknown` must be 'fail' or 'rerun'")
  }
  const needs = spec.clientCapabilities
  if (needs !== undefined && !(Array.isArray(needs) && needs.every((name) => CLIENT_CAPABILITIES.includes(name)))) {
    throw new SeamError('INVALID_TOOL', "defineTool: `clientCapabilities` must be a list of 'sampling', 'elicitation' and 'roots'")
  }
  if (spec.task !== undefined && spec.task !== 'optional' && spec.task !== 'required') {
    throw new SeamError('INVALID_TOOL', "defineTool: `task` must be 'optional' or 'required'")
  }
  if (spec.taskStarts !== undefined && spec.taskStarts !== 'at-once' && spec.taskStarts !== 'after-input') {
    throw new SeamError('INVALID_TOOL', "defineTool: `taskStarts` must be 'at-once' or 'after-input'")
  }
  if (spec.taskStarts !== undefined && spec.task === undefined) {
    throw new SeamError('INVALID_TOOL', 'defineTool: `taskStarts` says when a call of a `task` tool becomes a task: set `task` as well')
  }
  for (const key of ['timeoutMs', 'maxTimeoutMs', 'policyTimeoutMs'] as const) {
    const value = spec[key]
    if (value !== undefined && !(Number.isFinite(value) && value > 0 && value <= 0x7fff_ffff)) {
      throw new SeamError('INVALID_TOOL', `defineTool: \`${key}\` must be a positive number of milliseconds up to 2147483647`)
    }
  }
  if (spec.maxTimeoutMs !== undefined && spec.timeoutMs !== undefined && spec.maxTimeoutMs < spec.timeoutMs) {
    throw new SeamError('INVALID_TOOL', 'defineTool: `maxTimeoutMs` must not be less than `timeoutMs`')
  }
  // `execute` returns what `output` accepts; the pipeline validates it into the value type.
  return Object.freeze({ ...spec, $seam: TOOL_BRAND }) as unknown as ToolDefinition<I, ValueOf<S, O>>
}

export function isToolDefinition(value: unknown): value is ToolDefinition {
  const v = value as Partial<ToolDefinition> | null
  return typeof v === 'object' && v !== null && v.$seam === TOOL_BRAND && typeof v.execute === 'function'
}

export interface SkillSpec {
  description: string
  instructions: string
  /** Tools the skill uses (names as the model sees them). */
  tools?: string[]
  /** Always included in the prompt's skill section. */
  always?: boolean
  /** Served as the prompt's arguments; `{{name}}` in the instructions is replaced by the value. */
  arguments?: SkillArgument[]
  /**
   * What the prompt embeds besides its text: resource URIs (`{{name}}` substituted), or, in a
   * skill file, paths relative to it (`./` or `../`) of files under the plugin's `agent/resources/`.
   */
  resources?: string[]
}

/** One argument of a skill served as a prompt. */
export interface SkillArgument {
  name: string
  description?: string
  required?: boolean
  /** Asked of the person (an MCP form elicitation) when a `prompts/get` leaves it out. */
  ask?: SkillArgumentAsk
  /** What `completion/complete` offers for it (those starting with what was typed); never listed. */
  values?: string[]
}

/** How a skill argument is asked of the person when the client did not pass it. */
export interface SkillArgumentAsk {
  /** What the person is asked. */
  message: string
  /** The input request's key in a 2026-07-28 `input_required` round (default: the argument's name). */
  key?: string
  /** The form field's title. */
  title?: string
  /** The form field's description (default: the argument's). */
  description?: string
}

export interface SkillDefinition extends Readonly<SkillSpec> {
  readonly $seam: 'seam-runtime/skill@1'
}

export function defineSkill(spec: SkillSpec): SkillDefinition {
  if (typeof spec?.description !== 'string' || spec.description.trim() === '') {
    throw new SeamError('INVALID_SKILL', 'defineSkill: `description` must be a non-empty string')
  }
  if (typeof spec.instructions !== 'string') {
    throw new SeamError('INVALID_SKILL', 'defineSkill: `instructions` must be a string')
  }
  for (const a of spec.arguments ?? []) {
    const values = a?.values === undefined ? undefined : argumentValues(a.values)
    if (typeof values === 'string') throw new SeamError('INVALID_SKILL', `defineSkill: the \`values\` of argument ${JSON.stringify(a.name)} must be ${values}`)
  }
  return Object.freeze({ ...spec, tools: spec.tools ? Object.freeze([...spec.tools]) as string[] : undefined, $seam: 'seam-runtime/skill@1' })
}

/** A zod schema, recognised by shape (never `instanceof`). */
export function isZodSchema(value: unknown): value is z.ZodType {
  const v = value as { _zod?: unknown; safeParse?: unknown } | null
  return typeof v === 'object' && v !== null && typeof v._zod === 'object' && typeof v.safeParse === 'function'
}

/**
 * A structured question a running tool asks the person behind its turn (`ctx.ask`), as MCP
 * elicitation allows: a flat object of primitive fields.
 */

/** The string formats MCP elicitation allows on a `StringField`; the runtime checks a question against this list. */
export const STRING_FORMATS = Object.freeze(['email', 'uri', 'date', 'date-time'] as const)

interface FieldBase {
  readonly title?: string
  readonly description?: string
}

/** A single choice: `enum` (with optional `enumNames`), or `oneOf` of `{ const, title }`. */
export type StringField = FieldBase & {
  readonly type: 'string'
  readonly minLength?: number
  readonly maxLength?: number
  readonly format?: (typeof STRING_FORMATS)[number]
  readonly enum?: readonly string[]
  readonly enumNames?: readonly string[]
  readonly oneOf?: readonly { readonly const: string; readonly title: string }[]
  readonly default?: string
}

export type NumberField = FieldBase & { readonly type: 'number' | 'integer'; readonly minimum?: number; readonly maximum?: number; readonly default?: number }

export type BooleanField = FieldBase & { readonly type: 'boolean'; readonly default?: boolean }

/** Several choices: `items.enum`, or `items.anyOf` of `{ const, title }`. */
export type MultiSelectField = FieldBase & {
  readonly type: 'array'
  readonly minItems?: number
  readonly maxItems?: number
  readonly items: { readonly type: 'string'; readonly enum: readonly string[] } | { readonly anyOf: readonly { readonly const: string; readonly title: string }[] }
  readonly default?: readonly string[]
}

export type QuestionField = StringField | NumberField | BooleanField | MultiSelectField

export interface QuestionSchema {
  readonly type: 'object'
  readonly properties: Readonly<Record<string, QuestionField>>
  readonly required?: readonly string[]
}

export type AnswerValue = string | number | boolean | readonly string[]

/** What `ctx.ask` resolves with: the person accepted (with the answer), declined, or dismissed it. */
export type QuestionAnswer =
  | { readonly action: 'accept'; readonly content: Readonly<Record<string, AnswerValue>> }
  | { readonly action: 'decline' }
  | { readonly action: 'cancel' }

/** What a body passes to `ctx.ask`. */
export interface ToolQuestion {
  readonly message: string
  readonly schema: QuestionSchema
  /** How long the person has to answer (default the root's `approvalTimeoutMs`); past it the answer is `cancel`. */
  readonly timeoutMs?: number
  /** The name the question goes by in an MCP `input_required` round's `inputRequests` (default its id, `q1`, …). */
  readonly key?: string
}

/** One question as a port receives it. */
export interface QuestionRequest {
  /** Unique in its call: `q1`, `q2`, … */
  readonly questionId: string
  readonly callId: string
  readonly name: string
  readonly turnId: string
  readonly message: string
  readonly schema: QuestionSchema
  /** The body's name for it (`ToolQuestion.key`), when it gave one. */
  readonly key?: string
  /** Aborted when the answer is no longer wanted (deadline, the call's abort, another port answered). */
  readonly signal: AbortSignal
}

/**
 * One block of a sampling message, as MCP's `sampling/createMessage` carries it: `text`, `image`
 * or `audio` (base64 `data` with its `mimeType`), or another the client understands.
 */
export type SamplingContent =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image' | 'audio'; readonly data: string; readonly mimeType: string }
  | { readonly type: string; readonly [field: string]: unknown }

export interface SamplingMessage {
  readonly role: 'user' | 'assistant'
  readonly content: SamplingContent | readonly SamplingContent[]
}

/** What a body passes to `ctx.sample`: MCP's `sampling/createMessage` params, plus how long to wait. */
export interface ToolSample {
  readonly messages: readonly SamplingMessage[]
  readonly maxTokens: number
  readonly systemPrompt?: string
  readonly temperature?: number
  readonly stopSequences?: readonly string[]
  readonly modelPreferences?: Readonly<Record<string, unknown>>
  readonly includeContext?: 'none' | 'thisServer' | 'allServers'
  readonly metadata?: Readonly<Record<string, unknown>>
  /** How long the client has to answer (default the root's `approvalTimeoutMs`); past it `ctx.sample` rejects. */
  readonly timeoutMs?: number
  /** The name this request goes by in an MCP `input_required` round's `inputRequests` (default its id, `q1`, …). */
  readonly key?: string
}

/** What `ctx.sample` resolves with: the client's `sampling/createMessage` result. */
export interface SampleResult {
  readonly role: 'user' | 'assistant'
  readonly content: SamplingContent | readonly SamplingContent[]
  readonly model: string
  readonly stopReason?: string
}

/** One of the client's roots (`ctx.roots()`): a `file://` URI it lets the server work in. */
export interface ClientRoot {
  readonly uri: string
  readonly name?: string
}

/** What a body may pass to `ctx.roots()`. */
export interface ToolRootsQuery {
  /** How long the client has to answer (default the root's `approvalTimeoutMs`); past it `ctx.roots` rejects. */
  readonly timeoutMs?: number
  /** As `ToolSample.key`. */
  readonly key?: string
}

/** One sampling request as a port receives it (ids and signal as `QuestionRequest`'s). */
export interface SampleRequest {
  readonly questionId: string
  readonly callId: string
  readonly name: string
  readonly turnId: string
  readonly key?: string
  /** The `sampling/createMessage` params, as the body gave them (less `timeoutMs` and `key`). */
  readonly params: Omit<ToolSample, 'timeoutMs' | 'key'>
  readonly signal: AbortSignal
}

/** One roots request as a port receives it. */
export interface RootsRequest {
  readonly questionId: string
  readonly callId: string
  readonly name: string
  readonly turnId: string
  readonly key?: string
  readonly signal: AbortSignal
}

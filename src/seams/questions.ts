/**
 * A structured question a running tool asks the person behind its turn (`ctx.ask`), as MCP
 * elicitation allows: a flat object of primitive fields.
 */

interface FieldBase {
  readonly title?: string
  readonly description?: string
}

/** A single choice: `enum` (with optional `enumNames`), or `oneOf` of `{ const, title }`. */
export type StringField = FieldBase & {
  readonly type: 'string'
  readonly minLength?: number
  readonly maxLength?: number
  readonly format?: 'email' | 'uri' | 'date' | 'date-time'
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
  /** Aborted when the answer is no longer wanted (deadline, the call's abort, another port answered). */
  readonly signal: AbortSignal
}

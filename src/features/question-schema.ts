/**
 * The shape rules of a question (`ctx.ask`) and of its answers. A schema is a flat object, as MCP
 * elicitation allows: each property a string (optionally a format, a length range, or a single
 * choice by `enum` or `oneOf` of `{ const, title }`), a number or integer (optionally a range), a
 * boolean, or a multi-select (`array` of `items.enum` or `items.anyOf` of `{ const, title }`).
 * An answer's content must match it: no other keys, every required key, each value of its type and
 * within its bounds; an absent field with a `default` takes it.
 */
import { SeamError } from '../errors.js'
import { type AnswerValue, type QuestionField, type QuestionSchema, STRING_FORMATS } from '../seams/questions.js'
import { choicesOf } from './question-fields.js'

const FORMATS: ReadonlySet<string> = new Set(STRING_FORMATS)

/** Throws `INVALID_QUESTION` unless `question` is `{ message, schema, timeoutMs? }` with a schema as above. */
export function checkQuestion(question: unknown): void {
  if (question === null || typeof question !== 'object') throw invalid('takes an object { message, schema }')
  const { message, schema, timeoutMs, key } = question as Record<string, unknown>
  if (typeof message !== 'string' || message.trim() === '') throw invalid('needs a `message`')
  if (key !== undefined && !isRequestKey(key)) throw invalid('`key` must be 1 to 64 letters, digits, `_`, `-` or `.`')
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 0x7fff_ffff)) {
    throw invalid('`timeoutMs` must be a positive number of milliseconds')
  }
  if (schema === null || typeof schema !== 'object') throw invalid('needs a `schema` object')
  const { type, properties, required } = schema as Record<string, unknown>
  if (type !== 'object' || properties === null || typeof properties !== 'object' || Array.isArray(properties)) {
    throw invalid('`schema` must be { type: "object", properties: { … } }')
  }
  for (const [key, field] of Object.entries(properties)) checkField(key, field)
  if (required !== undefined && !(Array.isArray(required) && required.every((k) => typeof k === 'string' && Object.hasOwn(properties, k)))) {
    throw invalid('`schema.required` must list property names')
  }
}

/** A name a body gives a request to its client (`key`): short and plain, as it travels in MCP's `inputRequests`. */
export function isRequestKey(key: unknown): key is string {
  return typeof key === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(key)
}

function checkField(key: string, field: unknown): void {
  const at = (why: string) => invalid(`\`schema.properties.${key}\` ${why}`)
  if (field === null || typeof field !== 'object') throw at('must be an object')
  const f = field as Record<string, unknown>
  for (const text of ['title', 'description'] as const) if (f[text] !== undefined && typeof f[text] !== 'string') throw at(`has a \`${text}\` that is not a string`)
  switch (f.type) {
    case 'string': {
      if (f.format !== undefined && !FORMATS.has(f.format as string)) throw at('has a `format` MCP does not allow')
      if (f.enum !== undefined && !strings(f.enum)) throw at('has an `enum` that is not a list of strings')
      if (f.enumNames !== undefined && !(strings(f.enumNames) && Array.isArray(f.enum) && f.enumNames.length === f.enum.length)) throw at('has `enumNames` that do not match its `enum`')
      if (f.oneOf !== undefined && !titled(f.oneOf)) throw at('has a `oneOf` that is not a list of { const, title }')
      if (f.default !== undefined && typeof f.default !== 'string') throw at('has a `default` that is not a string')
      return
    }
    case 'number':
    case 'integer':
      if (f.default !== undefined && typeof f.default !== 'number') throw at('has a `default` that is not a number')
      return
    case 'boolean':
      if (f.default !== undefined && typeof f.default !== 'boolean') throw at('has a `default` that is not a boolean')
      return
    case 'array': {
      const items = f.items as Record<string, unknown> | undefined
      const ok = items !== undefined && items !== null && ((items.type === 'string' && strings(items.enum)) || titled(items.anyOf))
      if (!ok) throw at('is a multi-select: `items` must be { type: "string", enum } or { anyOf: [{ const, title }] }')
      if (f.default !== undefined && !strings(f.default)) throw at('has a `default` that is not a list of strings')
      return
    }
    default:
      throw at('must be of type string, number, integer, boolean or array (a multi-select)')
  }
}

function strings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string')
}

function titled(value: unknown): value is { const: string; title: string }[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => v !== null && typeof v === 'object' && typeof v.const === 'string' && typeof v.title === 'string')
}

function invalid(why: string): SeamError {
  return new SeamError('INVALID_QUESTION', `ctx.ask() ${why}`)
}

/**
 * The answer's content checked against `schema`, with defaults filled in: the content, or the
 * reason it does not match.
 */
export function checkContent(schema: QuestionSchema, content: unknown): { ok: true; content: Record<string, AnswerValue> } | { ok: false; reason: string } {
  if (content === null || typeof content !== 'object' || Array.isArray(content)) return { ok: false, reason: 'the answer is not an object' }
  const given = content as Record<string, unknown>
  const out: Record<string, AnswerValue> = {}
  for (const key of Object.keys(given)) if (!Object.hasOwn(schema.properties, key)) return { ok: false, reason: `the answer has a field the question did not ask for: ${JSON.stringify(key)}` }
  for (const [key, field] of Object.entries(schema.properties)) {
    const value = given[key] ?? field.default
    if (value === undefined) {
      if (schema.required?.includes(key)) return { ok: false, reason: `the answer lacks ${JSON.stringify(key)}` }
      continue
    }
    const why = fieldProblem(field, value)
    if (why !== undefined) return { ok: false, reason: `${JSON.stringify(key)} ${why}` }
    out[key] = Array.isArray(value) ? Object.freeze([...value]) : (value as AnswerValue)
  }
  return { ok: true, content: Object.freeze(out) }
}

function fieldProblem(field: QuestionField, value: unknown): string | undefined {
  switch (field.type) {
    case 'string': {
      if (typeof value !== 'string') return 'is not a string'
      const choices = choicesOf(field)
      if (choices && !choices.some((c) => c.value === value)) return 'is not one of the choices'
      if (field.minLength !== undefined && value.length < field.minLength) return `is shorter than ${field.minLength}`
      if (field.maxLength !== undefined && value.length > field.maxLength) return `is longer than ${field.maxLength}`
      return undefined
    }
    case 'number':
    case 'integer':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'is not a number'
      if (field.type === 'integer' && !Number.isInteger(value)) return 'is not an integer'
      if (field.minimum !== undefined && value < field.minimum) return `is below ${field.minimum}`
      if (field.maximum !== undefined && value > field.maximum) return `is above ${field.maximum}`
      return undefined
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'is not a boolean'
    case 'array': {
      if (!strings(value)) return 'is not a list of strings'
      const choices = choicesOf(field)!
      if (!value.every((v) => choices.some((c) => c.value === v))) return 'holds a value that is not one of the choices'
      if (field.minItems !== undefined && value.length < field.minItems) return `has fewer than ${field.minItems} choices`
      if (field.maxItems !== undefined && value.length > field.maxItems) return `has more than ${field.maxItems} choices`
      return undefined
    }
  }
}

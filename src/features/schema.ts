import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { JsonSchema } from '../seams/types.js'
import { isZodSchema } from './define-tool.js'

const exported = new WeakMap<object, JsonSchema>()

/** The JSON Schema a model sees for a zod or JSON Schema input (cached per schema object). */
export function toJsonSchema(schema: unknown): JsonSchema {
  if (schema === null || typeof schema !== 'object') return { type: 'object', properties: {} }
  const cached = exported.get(schema)
  if (cached) return cached
  let json: JsonSchema
  if (isZodSchema(schema)) {
    // The model writes inputs: a field with a default is optional to it.
    json = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'input' }) as JsonSchema
  } else {
    json = schema as JsonSchema
  }
  deepFreeze(json)
  exported.set(schema, json)
  return json
}

/** JSON with sorted keys, so equal schemas give equal text whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`
  const keys = Object.keys(value).sort()
  return `{${keys
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`)
    .join(',')}}`
}

/** Identifies a tool for session grants and validator reuse: name, description, input schema. */
export function toolFingerprint(name: string, description: string, parameters: JsonSchema): string {
  return createHash('sha256').update(stableStringify({ name, description, parameters })).digest('base64url').slice(0, 22)
}

/** See `lossless.ts`: answered by the `for…in` loop itself in optimized code, unlike `Object.hasOwn`. */
const ownKey = Object.prototype.hasOwnProperty

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) deepFreeze(value[index])
    } else {
      // `for…in` allocates no key array; inherited enumerable keys are skipped.
      for (const key in value) if (ownKey.call(value, key)) deepFreeze((value as Record<string, unknown>)[key])
    }
  }
  return value
}

import { createHash } from 'node:crypto'
import { Ajv, type ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { messageOf } from '../errors.js'
import { isZodSchema } from './define-tool.js'
import { stableStringify } from './schema.js'

export interface ValidationIssue {
  /** A JSON-pointer-like path: `/items/0/id`, or `/` for the whole value. */
  readonly path: string
  readonly message: string
}

export type ValidationResult = { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] }
export type Validator = (value: unknown) => ValidationResult

const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void
const MAX_CACHED = 2_000
const AJV_ROTATE_AFTER = 500

/**
 * Compiles JSON Schemas lazily, once per distinct schema text, with one Ajv per draft. Compiled
 * validators are reused across generations while the schema is unchanged; the oldest are evicted
 * (and removed from Ajv, which otherwise keeps every schema alive) past `MAX_CACHED`.
 */
class ValidatorCache {
  #draft7: Ajv | undefined
  #draft2020: Ajv2020 | undefined
  #compiles = 0
  readonly #byText = new Map<string, { validate: Validator; schema: object; ajv: Ajv | Ajv2020 }>()
  readonly #byObject = new WeakMap<object, Validator>()
  readonly #untrustedByObject = new WeakMap<object, Validator>()

  /**
   * The validator for a zod schema or a JSON Schema. `untrusted` (a remote provider's schema) drops
   * `pattern` and `patternProperties` before compiling: a hostile regex would otherwise run on the
   * host's event loop (ReDoS). The provider still validates its own input authoritatively.
   */
  forSchema(schema: unknown, untrusted = false): Validator {
    if (schema === null || typeof schema !== 'object') return acceptAny
    const cache = untrusted ? this.#untrustedByObject : this.#byObject
    const known = cache.get(schema)
    if (known) return known
    let validate: Validator
    try {
      validate = isZodSchema(schema)
        ? zodValidator(schema)
        : this.#jsonValidator(untrusted ? (withoutPatterns(schema) as Record<string, unknown>) : (schema as Record<string, unknown>))
    } catch (error) {
      validate = uncompilable(messageOf(error))
    }
    cache.set(schema, validate)
    return validate
  }

  #jsonValidator(schema: Record<string, unknown>): Validator {
    const key = createHash('sha256').update(stableStringify(schema)).digest('base64url')
    const hit = this.#byText.get(key)
    if (hit) {
      this.#byText.delete(key)
      this.#byText.set(key, hit)
      return hit.validate
    }
    const ajv = this.#ajvFor(schema)
    const copy = structuredClone(schema)
    delete copy.$id
    let compiled: ValidateFunction
    try {
      compiled = ajv.compile(copy)
    } catch (error) {
      return uncompilable(messageOf(error))
    }
    // An `$async` schema compiles to a validator that returns a promise: every value would pass.
    if ((compiled as { $async?: unknown }).$async === true) return uncompilable('asynchronous schemas ($async) are not supported')
    this.#compiles += 1
    const validate: Validator = (value) =>
      compiled(value)
        ? { ok: true, value }
        : {
            ok: false,
            issues: (compiled.errors ?? []).map((e) => ({ path: ajvPath(e), message: ajvMessage(e) })),
          }
    this.#byText.set(key, { validate, schema: copy, ajv })
    if (this.#byText.size > MAX_CACHED) {
      const [oldestKey, oldest] = this.#byText.entries().next().value as [string, { schema: object; ajv: Ajv }]
      this.#byText.delete(oldestKey)
      oldest.ajv.removeSchema(oldest.schema)
    }
    return validate
  }

  #ajvFor(schema: Record<string, unknown>): Ajv | Ajv2020 {
    // Ajv keeps every compiled schema's code in a scope shared by the instance, even after
    // removeSchema: start fresh instances now and then (validators already compiled keep working).
    if (this.#compiles >= AJV_ROTATE_AFTER) {
      this.#compiles = 0
      this.#draft7 = undefined
      this.#draft2020 = undefined
    }
    const draft = typeof schema.$schema === 'string' ? schema.$schema : ''
    if (draft.includes('2020-12') || draft.includes('2019-09')) {
      if (!this.#draft2020) {
        this.#draft2020 = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
        addFormats(this.#draft2020)
      }
      return this.#draft2020
    }
    if (!this.#draft7) {
      this.#draft7 = new Ajv({ strict: false, allErrors: true, validateSchema: false })
      addFormats(this.#draft7)
    }
    return this.#draft7
  }
}

/** The JSON pointer of the value at fault; a missing property is named by its own path (`/a/b`), as zod does. */
function ajvPath(e: { keyword: string; instancePath: string; params: Record<string, unknown> }): string {
  if (e.keyword === 'required' && typeof e.params.missingProperty === 'string') {
    return `${e.instancePath}/${e.params.missingProperty.replace(/~/g, '~0').replace(/\//g, '~1')}`
  }
  return e.instancePath === '' ? '/' : e.instancePath
}

function ajvMessage(e: { keyword: string; message?: string; params: Record<string, unknown> }): string {
  if (e.keyword === 'required') return 'is required'
  if (e.keyword === 'additionalProperties') return `has an unexpected property "${String(e.params.additionalProperty)}"`
  if (e.keyword === 'enum') return `must be one of ${JSON.stringify(e.params.allowedValues)}`
  return e.message ?? `fails "${e.keyword}"`
}

const acceptAny: Validator = (value) => ({ ok: true, value })

/** A validator for a schema that cannot be used: every call fails with the reason (fail closed). */
function uncompilable(reason: string): Validator {
  return () => ({ ok: false, issues: [{ path: '/', message: `the tool's input schema cannot be compiled: ${reason}` }] })
}

const MAX_UNTRUSTED_DEPTH = 64

/**
 * A copy of an untrusted JSON Schema without regular expressions (`pattern`, `patternProperties`)
 * and without `$async` (Ajv would compile a validator that returns a promise), at any depth. A
 * schema nested deeper than it can be looked through is refused.
 */
function withoutPatterns(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value
  if (depth > MAX_UNTRUSTED_DEPTH) throw new Error(`it is nested deeper than ${MAX_UNTRUSTED_DEPTH} levels`)
  if (Array.isArray(value)) return value.map((item) => withoutPatterns(item, depth + 1))
  const copy: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    if ((key === 'pattern' && typeof item === 'string') || key === 'patternProperties' || key === '$async') continue
    Object.defineProperty(copy, key, { value: withoutPatterns(item, depth + 1), enumerable: true, writable: true, configurable: true })
  }
  return copy
}

function zodValidator(schema: { safeParse(v: unknown): unknown }): Validator {
  return (value) => {
    const result = schema.safeParse(value) as
      | { success: true; data: unknown }
      | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } }
    if (result.success) return { ok: true, value: result.data }
    return {
      ok: false,
      issues: result.error.issues.map((i) => ({
        path: i.path.length === 0 ? '/' : `/${i.path.map(String).join('/')}`,
        message: i.message,
      })),
    }
  }
}

export const validators = new ValidatorCache()

/** One line a model can act on: `/id: is required; /limit: must be <= 100`. */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .slice(0, 10)
    .map((i) => `${i.path}: ${i.message}`)
    .join('; ')
}

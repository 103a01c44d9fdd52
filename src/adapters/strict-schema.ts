import type { JsonSchema } from '../seams/types.js'

/** A schema OpenAI's strict mode accepts, or why the tool's schema cannot be strict. */
export type StrictSchemaResult = { ok: true; schema: JsonSchema } | { ok: false; reason: string }

/**
 * Converts a tool's input schema to the subset OpenAI's strict mode (Structured Outputs) accepts,
 * without changing what the tool accepts:
 *
 * 1. Every object lists all its properties in `required` and sets `additionalProperties: false`;
 *    a property that was optional becomes nullable (the model sends `null` for "absent", and
 *    `dropStrictNulls` removes those nulls again before the pipeline validates the arguments).
 * 2. Annotations strict mode refuses (`$schema`, `$id`, `examples`, unknown keywords such as
 *    `nullable` or `x-…`) are dropped.
 * 3. Constraints strict mode lacks (`minLength`, `uniqueItems`, `minProperties`, …) and a
 *    `default` move into the property's `description`: the model still reads them, the pipeline
 *    still enforces them, and a default still applies when the model sends `null` for it.
 * 4. `oneOf` becomes `anyOf` and a single-member `allOf` is inlined: the pipeline still checks the
 *    original schema, so nothing the tool refuses gets through.
 * 5. Anything else cannot be strict and is reported, per tool, with the JSON path and the reason:
 *    a free-form object (no `properties` below the root, or `additionalProperties` other than
 *    `false`),
 *    `patternProperties`, `not`, `if`/`then`/`else`, a multi-member `allOf`, a root that is not an
 *    object, or OpenAI's size limits (10 levels of nesting, 5,000 properties, 1,000 enum values).
 */
export function toStrictSchema(schema: JsonSchema): StrictSchemaResult {
  const state: State = { properties: 0 }
  try {
    const root = resolveRoot(schema)
    if (root.type !== 'object' || root.anyOf !== undefined) throw new NotStrict('$', 'the root must be a plain object schema')
    return { ok: true, schema: convert(schema, '$', 0, state) as JsonSchema }
  } catch (error) {
    if (error instanceof NotStrict) return { ok: false, reason: `${error.path}: ${error.message}` }
    throw error
  }
}

/**
 * Removes the `null`s strict mode made the model send for optional properties, guided by the
 * original schema: a `null` is dropped only where the property is optional and its own schema
 * does not accept `null`. It looks everywhere the conversion went: properties, array items, the
 * member of an `anyOf` / `oneOf` the value was written for, single-member `allOf`s and local
 * `$ref`s. Returns a new value; never mutates `value`.
 */
export function dropStrictNulls(value: unknown, schema: JsonSchema): unknown {
  return dropNulls(value, schema, schema, 0)
}

class NotStrict extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message)
  }
}

interface State {
  properties: number
}

const MAX_DEPTH = 10
const MAX_PROPERTIES = 5_000
const MAX_ENUM = 1_000

/** Constraints strict mode lacks: described to the model, enforced by the pipeline. */
const DESCRIBED = new Set([
  'minLength',
  'maxLength',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'contains',
  'minContains',
  'maxContains',
  'prefixItems',
  'format',
])
/** Formats strict mode supports; any other moves into the description. */
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])
const NO_CONDITIONALS = '`if`/`then`/`else` has no strict equivalent'
const REFUSED = new Map<string, string>([
  ['not', '`not` has no strict equivalent'],
  ['if', NO_CONDITIONALS],
  ['then', NO_CONDITIONALS],
  ['else', NO_CONDITIONALS],
  ['patternProperties', '`patternProperties` (a map with open keys) cannot be strict'],
  ['propertyNames', '`propertyNames` (a map with open keys) cannot be strict'],
  ['dependentRequired', '`dependentRequired` has no strict equivalent'],
  ['dependentSchemas', '`dependentSchemas` has no strict equivalent'],
  ['dependencies', '`dependencies` has no strict equivalent'],
  ['unevaluatedProperties', '`unevaluatedProperties` has no strict equivalent'],
  ['unevaluatedItems', '`unevaluatedItems` has no strict equivalent'],
])
/** Keywords strict mode takes as they are. */
const KEPT = new Set(['type', 'description', 'title', 'const', '$ref', 'pattern', 'multipleOf', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minItems', 'maxItems'])
/** Keywords whose values are schemas or maps of schemas, converted recursively. */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions'])

function resolveRoot(schema: JsonSchema): JsonSchema {
  const allOf = schema.allOf
  if (Array.isArray(allOf) && allOf.length === 1 && isSchema(allOf[0])) return { ...schema, ...allOf[0], allOf: undefined }
  return schema
}

function convert(input: unknown, path: string, depth: number, state: State): unknown {
  if (input === true) throw new NotStrict(path, 'an unconstrained schema (`true`) cannot be strict')
  if (!isSchema(input)) throw new NotStrict(path, 'not a schema object')
  if (depth > MAX_DEPTH) throw new NotStrict(path, `nested deeper than ${MAX_DEPTH} levels`)
  let schema = input
  if (Array.isArray(schema.allOf)) {
    if (schema.allOf.length !== 1) throw new NotStrict(path, '`allOf` with several members has no strict equivalent')
    const { allOf, ...rest } = schema
    schema = { ...rest, ...(allOf[0] as JsonSchema) }
  }
  const out: JsonSchema = {}
  const notes: string[] = []
  for (const [key, value] of Object.entries(schema)) {
    const refused = REFUSED.get(key)
    if (refused) throw new NotStrict(path, refused)
    if (key === 'format' && typeof value === 'string' && FORMATS.has(value)) {
      out.format = value
    } else if (DESCRIBED.has(key) || key === 'default') {
      notes.push(`${key}: ${JSON.stringify(value)}`)
    } else if (SCHEMA_MAPS.has(key)) {
      out[key] = convertMap(value, `${path}.${key}`, key === 'properties' ? depth + 1 : depth, state, key === 'properties')
    } else if (key === 'items') {
      if (Array.isArray(value)) throw new NotStrict(path, 'tuple `items` has no strict equivalent')
      out.items = convert(value, `${path}.items`, depth + 1, state)
    } else if (key === 'anyOf' || key === 'oneOf') {
      if (!Array.isArray(value)) throw new NotStrict(path, `\`${key}\` must be an array`)
      out.anyOf = value.map((member, i) => convert(member, `${path}.${key}[${i}]`, depth + 1, state))
    } else if (key === 'enum') {
      if (!Array.isArray(value) || value.length > MAX_ENUM) throw new NotStrict(path, `an enum of more than ${MAX_ENUM} values`)
      out.enum = value
    } else if (key === 'additionalProperties') {
      if (value !== false) throw new NotStrict(path, 'an object with open `additionalProperties` (a free-form map) cannot be strict')
    } else if (KEPT.has(key)) {
      out[key] = value
    }
    // Anything else (`nullable`, `x-…`, editor hints) is an annotation no validator reads: dropped.
  }
  if (isObjectType(schema)) closeObject(schema, out, path)
  if (notes.length > 0) {
    const description = typeof out.description === 'string' && out.description !== '' ? `${out.description} ` : ''
    out.description = `${description}(${notes.join(', ')})`
  }
  return out
}

function isObjectType(schema: JsonSchema): boolean {
  return schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object')) || (schema.type === undefined && isSchema(schema.properties))
}

/** All properties required, the optional ones nullable, nothing else allowed. */
function closeObject(schema: JsonSchema, out: JsonSchema, path: string): void {
  const properties = (out.properties ?? {}) as Record<string, JsonSchema>
  // At the root, an object without properties is a tool that takes no arguments (MCP's `{ type:
  // 'object' }`): closing it loses nothing. Deeper down it is a value of any shape.
  const noArguments = path === '$' && schema.additionalProperties === undefined
  if (Object.keys(properties).length === 0 && schema.additionalProperties !== false && !noArguments) {
    throw new NotStrict(path, 'an object without declared `properties` (free-form) cannot be strict')
  }
  out.properties = properties
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
  for (const name of Object.keys(properties)) {
    if (!required.has(name)) properties[name] = nullable(properties[name]!)
  }
  out.type ??= 'object'
  out.required = Object.keys(properties)
  out.additionalProperties = false
}

function convertMap(value: unknown, path: string, depth: number, state: State, counted: boolean): Record<string, unknown> {
  if (!isSchema(value)) throw new NotStrict(path, 'must be an object of schemas')
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(value)) {
    if (counted && ++state.properties > MAX_PROPERTIES) throw new NotStrict(path, `more than ${MAX_PROPERTIES} properties in all`)
    out[name] = convert(member, `${path}.${name}`, depth, state)
  }
  return out
}

function nullable(schema: JsonSchema): JsonSchema {
  if (acceptsNull(schema)) return schema
  const { type } = schema
  if (typeof type === 'string' && schema.anyOf === undefined) {
    const out: JsonSchema = { ...schema, type: [type, 'null'] }
    if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null]
    return out
  }
  if (Array.isArray(type) && schema.anyOf === undefined) {
    const out: JsonSchema = { ...schema, type: [...type, 'null'] }
    if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null]
    return out
  }
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] }
  const { description, ...rest } = schema
  return description === undefined ? { anyOf: [rest, { type: 'null' }] } : { description, anyOf: [rest, { type: 'null' }] }
}

function acceptsNull(schema: JsonSchema): boolean {
  const { type } = schema
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true
  if (schema.const === null) return true
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key]
    if (Array.isArray(members) && members.some((member) => isSchema(member) && acceptsNull(member))) return true
  }
  return false
}

function dropNulls(value: unknown, schema: unknown, root: JsonSchema, depth: number): unknown {
  const resolved = effectiveSchema(schema, root)
  if (resolved === undefined || depth > 64 || value === null || typeof value !== 'object') return value
  // Strict mode closed every object branch of an `anyOf` (a `oneOf` became one): the model filled
  // in one of them, so its nulls are that branch's to drop.
  const branches = resolved.anyOf ?? resolved.oneOf
  if (Array.isArray(branches)) {
    const branch = branchOf(value, branches, root)
    if (branch !== undefined) value = dropNulls(value, branch, root, depth + 1)
  }
  if (Array.isArray(value)) {
    return isSchema(resolved.items) ? value.map((item) => dropNulls(item, resolved.items, root, depth + 1)) : value
  }
  if (!isSchema(resolved.properties)) return value
  const properties = resolved.properties as Record<string, unknown>
  const required = new Set(Array.isArray(resolved.required) ? (resolved.required as string[]) : [])
  const out: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const memberSchema = effectiveSchema(properties[key], root)
    if (member === null && !required.has(key) && memberSchema !== undefined && !acceptsNull(memberSchema)) continue
    out[key] = dropNulls(member, memberSchema, root, depth + 1)
  }
  return out
}

/** The schema as the conversion read it: local references followed, a single-member `allOf` inlined. */
function effectiveSchema(schema: unknown, root: JsonSchema): JsonSchema | undefined {
  let current = resolveRef(schema, root)
  for (let hops = 0; hops < 16 && isSchema(current) && Array.isArray(current.allOf) && current.allOf.length === 1; hops++) {
    const { allOf, ...rest } = current
    current = { ...rest, ...(resolveRef(allOf[0], root) as JsonSchema) }
  }
  return isSchema(current) ? current : undefined
}

/**
 * The member of an `anyOf` a value was written for: for an array, the first array member; for an
 * object, the first object member whose properties are exactly the value's keys (strict mode has
 * the model send every property of the branch it picks), else the first whose properties include
 * them all; a member whose `const` (a discriminator) says otherwise does not fit. `undefined` when
 * none fits: the value then stays as it is, for the pipeline to judge.
 */
function branchOf(value: object, branches: readonly unknown[], root: JsonSchema): JsonSchema | undefined {
  const members = branches.map((branch) => effectiveSchema(branch, root)).filter((branch) => branch !== undefined)
  if (Array.isArray(value)) return members.find((member) => member.type === 'array' || (Array.isArray(member.type) && member.type.includes('array')) || isSchema(member.items))
  const keys = Object.keys(value)
  let covering: JsonSchema | undefined
  for (const member of members) {
    if (!isSchema(member.properties)) continue
    const properties = member.properties as Record<string, unknown>
    const names = Object.keys(properties)
    if (!keys.every((key) => names.includes(key) && fitsConst((value as Record<string, unknown>)[key], properties[key], root))) continue
    if (names.length === keys.length) return member
    covering ??= member
  }
  return covering
}

function fitsConst(value: unknown, schema: unknown, root: JsonSchema): boolean {
  const resolved = effectiveSchema(schema, root)
  return resolved === undefined || !('const' in resolved) || resolved.const === value || (resolved.const !== null && typeof resolved.const === 'object')
}

/** Local `#/$defs/x` and `#/definitions/x` references only; anything else stays as is. */
function resolveRef(schema: unknown, root: JsonSchema): unknown {
  let current = schema
  for (let hops = 0; hops < 16 && isSchema(current) && typeof current.$ref === 'string'; hops++) {
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(current.$ref)
    const defs = match ? root[match[1]!] : undefined
    if (!match || !isSchema(defs)) return current
    current = defs[decodeURIComponent(match[2]!).replaceAll('~1', '/').replaceAll('~0', '~')]
  }
  return current
}

function isSchema(value: unknown): value is JsonSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

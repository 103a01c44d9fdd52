import type { Diagnostic } from '../../features/diagnostic.js'
import { toolFingerprint } from '../../features/schema.js'
import type { JsonSchema, OriginScope, ToolSchema, ToolService } from '../../seams/types.js'
// Type only: the capability shape is CapabilityIngress's; this file computes one part of it.
import type { ToolCapability } from '../../seams/capabilities.js'

/**
 * A remote tool as `CapabilityIngress` projects it: one `ToolService` schema entry, checked (a
 * remote schema is untrusted input: restrictions of the wrong type drop the tool, names are
 * bounded, its JSON Schemas are copied frozen and bounded in depth and size) and turned into a
 * `ToolCapability`; `undefined` for a tool that is skipped (told to `diagnose`), hidden or unavailable.
 */
export function seamTool(schema: ToolSchema, service: ToolService, owner: string, diagnose: (d: Diagnostic) => void): ToolCapability | undefined {
  const fn = schema?.function
  const name = typeof fn?.name === 'string' ? fn.name.trim() : ''
  const skip = (why: string) => {
    // Quoted and cut: a remote name may hold anything, and diagnostics reach terminals and logs.
    diagnose({ code: 'INVALID_TOOL', source: `seam:${service.id}`, message: `tool ${JSON.stringify(name.slice(0, 80))} from ${JSON.stringify(service.id)} ${why}; skipped` })
    return undefined
  }
  // Restrictions fail closed: a value of the wrong type drops the tool rather than lifting the restriction.
  if (schema?.hidden !== undefined && typeof schema.hidden !== 'boolean') return skip('has a `hidden` that is not a boolean')
  for (const key of ['permissions', 'platforms', 'scopes'] as const) {
    const value = schema?.[key] as unknown
    if (value !== undefined && !(Array.isArray(value) && value.every((s) => typeof s === 'string' && s.trim() !== ''))) {
      return skip(`has \`${key}\` that is not a list of names`)
    }
  }
  if (name === '' || schema.hidden === true) return undefined
  if (!SEAM_TOOL_NAME.test(name)) return skip('has a name that is not 1-64 of [a-zA-Z0-9_-] starting with a letter or digit')
  if (service.isAvailable && !safeAvailable(service, owner, name)) return undefined
  if (fn.parameters === null || typeof fn.parameters !== 'object') return skip('has no parameters object')
  // A copy the provider cannot change later (validators compile lazily), bounded in depth and size.
  const parameters = snapshotSchema(fn.parameters)
  const output = schema.outputSchema
  if (output !== undefined && (output === null || typeof output !== 'object' || Array.isArray(output))) return skip('has an `outputSchema` that is not an object')
  const outputSchema = output === undefined ? undefined : snapshotSchema(output)
  const description = typeof fn.description === 'string' ? fn.description : ''
  const strings = (v: unknown) => Object.freeze(Array.isArray(v) ? [...(v as string[])] : [])
  const keyed = schema.idempotencyKey
  if (keyed !== undefined && !(Array.isArray(keyed) && keyed.length > 0 && keyed.every((s) => typeof s === 'string' && s !== ''))) {
    return skip('has an `idempotencyKey` that is not a list of argument names')
  }
  const keyScope = schema.idempotencyScope
  if (keyScope !== undefined && !['session', 'principal', 'global'].includes(keyScope)) return skip('has an unknown `idempotencyScope`')
  const onUnknown = schema.onUnknown
  if (onUnknown !== undefined && onUnknown !== 'fail' && onUnknown !== 'rerun') return skip("has an `onUnknown` that is not 'fail' or 'rerun'")
  const { timeoutMs, maxTimeoutMs } = schema
  for (const [key, value] of [['timeoutMs', timeoutMs], ['maxTimeoutMs', maxTimeoutMs]] as const) {
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= 0x7fff_ffff)) {
      return skip(`has a \`${key}\` that is not a positive number of milliseconds`)
    }
  }
  return {
    name,
    description,
    parameters,
    outputSchema,
    source: typeof schema.source === 'string' && schema.source.trim() !== '' ? schema.source : `seam:${service.id}`,
    owner,
    kind: 'seam',
    approval: schema.approval ?? 'on-risk',
    permissions: strings(schema.permissions),
    platforms: strings(schema.platforms),
    scopes: strings(schema.scopes) as readonly OriginScope[],
    annotations: schema.annotations ? Object.freeze({ ...schema.annotations }) : undefined,
    ...(schema.trustAnnotations === false ? { trustAnnotations: false as const } : {}),
    concurrencySafe: schema.concurrencySafe === true,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(maxTimeoutMs === undefined ? {} : { maxTimeoutMs }),
    ...(keyed === undefined ? {} : { idempotencyKey: strings(keyed), idempotencyScope: keyScope ?? 'session' }),
    ...(keyed !== undefined && onUnknown === 'rerun' ? { onUnknown: 'rerun' as const } : {}),
    fingerprint: toolFingerprint(name, description, parameters),
  }
}

/** Like a local tool's name (letters may be capitals), and what model APIs accept as a function name. */
const SEAM_TOOL_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/

const MAX_SCHEMA_DEPTH = 64
const MAX_SCHEMA_NODES = 20_000

/** A frozen deep copy of a remote JSON Schema; throws when it is nested too deep or too large to walk. */
function snapshotSchema(schema: object): JsonSchema {
  let nodes = 0
  const copy = (value: unknown, depth: number): unknown => {
    if (++nodes > MAX_SCHEMA_NODES) throw new Error(`its input schema has more than ${MAX_SCHEMA_NODES} nodes`)
    if (value === null || typeof value !== 'object') return value
    if (depth > MAX_SCHEMA_DEPTH) throw new Error(`its input schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels`)
    if (Array.isArray(value)) return Object.freeze(value.map((item) => copy(item, depth + 1)))
    const out: Record<string, unknown> = {}
    // defineProperty: a `__proto__` key stays a key instead of setting the copy's prototype.
    for (const [key, item] of Object.entries(value)) Object.defineProperty(out, key, { value: copy(item, depth + 1), enumerable: true })
    return Object.freeze(out)
  }
  return copy(schema, 0) as JsonSchema
}

function safeAvailable(service: ToolService, owner: string, name: string): boolean {
  try {
    return service.isAvailable?.(owner, name) !== false
  } catch {
    return false
  }
}

import type { ApprovalMode, JsonSchema, ToolAnnotations, ToolSchema } from '../../seams/types.js'

/**
 * Maps a remote server's `tools/list` answer to `ToolSchema`s. The answer is untrusted: every tool is
 * checked on its own, and one that cannot be used safely is dropped with a note rather than passed
 * on half-valid (a bad schema would otherwise fail later, inside a generation's validator compile).
 */

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/
export const MAX_TOOLS = 1_000
export const MAX_DESCRIPTION_CHARS = 8_192
export const MAX_SCHEMA_CHARS = 65_536
export const MAX_SCHEMA_DEPTH = 32
const MAX_TITLE_CHARS = 200
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

export interface ToolMappingOptions {
  serverId: string
  /** `true`, `false`, or the names the host declared safe to run in parallel; omitted: the read-only-hinted tools. */
  concurrencySafe?: boolean | readonly string[]
  /** Listed names become `<prefix>__<name>`. */
  prefix?: string
  include?: readonly string[]
  exclude?: readonly string[]
  approval?: ApprovalMode
  /** Whether a server's `readOnlyHint` may skip approval (see `McpToolServiceOptions.trustAnnotations`). */
  trustAnnotations?: boolean
}

/** The server's own name of a listed tool: the listed name without the prefix. */
export function remoteName(listed: string, prefix: string | undefined): string | undefined {
  if (prefix === undefined) return listed
  return listed.startsWith(`${prefix}__`) ? listed.slice(prefix.length + 2) : undefined
}

/** Whether `name` matches a pattern where `*` stands for any run of characters. */
export function matchesPattern(name: string, pattern: string): boolean {
  const parts = pattern.split('*')
  if (parts.length === 1) return name === pattern
  let at = 0
  for (const [index, part] of parts.entries()) {
    if (index === 0) {
      if (!name.startsWith(part)) return false
      at = part.length
      continue
    }
    if (index === parts.length - 1) return name.length - part.length >= at && name.endsWith(part)
    const found = name.indexOf(part, at)
    if (found < 0) return false
    at = found + part.length
  }
  return true
}

function selected(name: string, options: ToolMappingOptions): boolean {
  if (options.include && !options.include.some((pattern) => matchesPattern(name, pattern))) return false
  return !options.exclude?.some((pattern) => matchesPattern(name, pattern))
}

export interface ToolMapping {
  schemas: ToolSchema[]
  /** One line per dropped or trimmed tool, for the service's diagnostic. */
  notes: string[]
}

export function mapTools(tools: unknown, options: ToolMappingOptions): ToolMapping {
  const notes: string[] = []
  const schemas: ToolSchema[] = []
  if (!Array.isArray(tools)) return { schemas, notes: ['tools/list did not return an array of tools'] }
  const seen = new Set<string>()
  for (const [index, tool] of tools.entries()) {
    if (schemas.length >= MAX_TOOLS) {
      notes.push(`dropped ${tools.length - index} tools past the limit of ${MAX_TOOLS}`)
      break
    }
    const result = mapTool(tool, options)
    if (result === undefined) continue
    if (typeof result === 'string') {
      notes.push(`dropped tool ${labelOf(tool, index)}: ${result}`)
      continue
    }
    if (seen.has(result.function.name)) {
      notes.push(`dropped tool ${labelOf(tool, index)}: duplicate name`)
      continue
    }
    seen.add(result.function.name)
    schemas.push(result)
  }
  return { schemas, notes }
}

/** One tool, the reason it was dropped, or `undefined` when the host's include/exclude leaves it out. */
function mapTool(tool: unknown, options: ToolMappingOptions): ToolSchema | string | undefined {
  if (!isPlainObject(tool)) return 'not an object'
  const { name, description, title, inputSchema, annotations } = tool
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) return 'invalid name (expected 1-64 of [a-zA-Z0-9_-])'
  if (!selected(name, options)) return undefined
  const listed = options.prefix === undefined ? name : `${options.prefix}__${name}`
  if (!TOOL_NAME.test(listed)) return `its name with the prefix, ${JSON.stringify(listed)}, is longer than 64 characters`
  const parameters = mapInputSchema(inputSchema)
  if (typeof parameters === 'string') return parameters
  const schema: ToolSchema = {
    type: 'function',
    function: { name: listed, description: describe(name, description, title, options.serverId), parameters },
    source: `mcp:${options.serverId}`,
  }
  if (options.approval !== undefined) schema.approval = options.approval
  if (tool.outputSchema !== undefined) {
    const output = mapObjectSchema(tool.outputSchema, 'outputSchema')
    if (typeof output === 'string') return output
    schema.outputSchema = output
  }
  const hints = mapAnnotations(annotations)
  if (hints) {
    schema.annotations = hints
    // An untrusted read-only hint changes nothing about approval: the tool asks as it would
    // without it (never skipping the question, never stricter than a tool without the hint).
    if (hints.readOnlyHint === true && !options.trustAnnotations) schema.trustAnnotations = false
  }
  // A read-only hint may let calls overlap (the host can say otherwise), never skip approval (above).
  const declared = options.concurrencySafe
  if (declared === undefined ? hints?.readOnlyHint === true : isDeclaredSafe(name, declared)) schema.concurrencySafe = true
  return schema
}

function mapInputSchema(value: unknown): JsonSchema | string {
  if (value === undefined) return { type: 'object', properties: {} }
  return mapObjectSchema(value, 'inputSchema')
}

/** A bounded, fresh copy of a schema that describes an object, or why it cannot be used. */
function mapObjectSchema(value: unknown, field: 'inputSchema' | 'outputSchema'): JsonSchema | string {
  if (!isPlainObject(value)) return `${field} is not an object`
  if (value.type !== undefined && value.type !== 'object') return `${field} must describe an object`
  // Depth first: the walk is bounded, while serialising a pathologically deep value is not.
  if (depthOf(value) > MAX_SCHEMA_DEPTH) return `${field} is nested deeper than ${MAX_SCHEMA_DEPTH} levels`
  const text = JSON.stringify(value)
  if (text.length > MAX_SCHEMA_CHARS) return `${field} is larger than ${MAX_SCHEMA_CHARS} characters`
  // A fresh copy: the cached schema must not share objects with the SDK's own tool cache.
  const copy = JSON.parse(text) as JsonSchema
  if (copy.type === undefined) copy.type = 'object'
  return copy
}

function describe(name: string, description: unknown, title: unknown, serverId: string): string {
  const text = typeof description === 'string' ? description.trim() : ''
  if (text) return text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : text
  const label = typeof title === 'string' && title.trim() ? title.trim().slice(0, 200) : name
  return `${label} (a tool from MCP server "${serverId}")`
}

/** MCP's annotations, well-typed ones only (boolean hints, a title cut to 200 characters); anything else is ignored. */
function mapAnnotations(value: unknown): ToolAnnotations | undefined {
  if (!isPlainObject(value)) return undefined
  const hints: ToolAnnotations = {}
  for (const key of HINTS) if (typeof value[key] === 'boolean') hints[key] = value[key]
  if (typeof value.title === 'string' && value.title.trim()) hints.title = value.title.trim().slice(0, MAX_TITLE_CHARS)
  return Object.keys(hints).length > 0 ? hints : undefined
}

function isDeclaredSafe(name: string, declared: boolean | readonly string[] | undefined): boolean {
  return declared === true || (Array.isArray(declared) && declared.includes(name))
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_SCHEMA_DEPTH) return depth
  if (value === null || typeof value !== 'object') return depth
  let max = depth
  for (const child of Object.values(value)) max = Math.max(max, depthOf(child, depth + 1))
  return max
}

function labelOf(tool: unknown, index: number): string {
  const name = isPlainObject(tool) ? tool.name : undefined
  return typeof name === 'string' ? JSON.stringify(name.slice(0, 80)) : `#${index}`
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

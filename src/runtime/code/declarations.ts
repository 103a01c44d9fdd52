/**
 * `declarationsFor(tools)`: the TypeScript declaration of the `tools` object a program sees,
 * generated from each tool's JSON Schemas, for a model to read. Nothing in a tool's name,
 * description or schema can leave the place it is printed in:
 * - descriptions go inside `/** … *\/` with every `*\/` broken up;
 * - names, keys and literal values are printed as JSON strings unless they are plain identifiers;
 * - a tool whose name is not an identifier (or is `call`) is declared only as an overload of
 *   `tools.call("name", args)`.
 */

export interface ToolDeclarationSource {
  name: string
  description?: string
  /** JSON Schema of the arguments. */
  inputSchema?: unknown
  /** JSON Schema of the value; `unknown` without one. */
  outputSchema?: unknown
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const MAX_DEPTH = 8
const MAX_DESCRIPTION = 2_000

type Schema = Record<string, unknown>

export function declarationsFor(tools: readonly ToolDeclarationSource[]): string {
  const lines = ['declare const tools: {']
  for (const tool of tools) {
    const args = typeOf(tool.inputSchema, 1)
    const value = tool.outputSchema === undefined ? 'unknown' : typeOf(tool.outputSchema, 1)
    lines.push(...comment(tool.description, '  '))
    if (isMethodName(tool.name)) lines.push(`  ${tool.name}(args: ${args}): Promise<${value}>;`)
    else lines.push(`  call(name: ${JSON.stringify(tool.name)}, args: ${args}): Promise<${value}>;`)
  }
  lines.push('  /** Calls any tool by its name; the host refuses one the turn does not have. */')
  lines.push('  call(name: string, args?: unknown): Promise<unknown>;')
  lines.push('};')
  return lines.join('\n')
}

function isMethodName(name: string): boolean {
  return IDENTIFIER.test(name) && name !== 'call' && name !== '__proto__'
}

/** A JSDoc block, or nothing; the text cannot close the comment. */
function comment(text: unknown, indent: string): string[] {
  if (typeof text !== 'string' || text.trim() === '') return []
  const clipped = text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…` : text
  const safe = clipped.replace(/\*\//g, '*\\/').replace(/\r\n?|[\u2028\u2029]/g, '\n')
  const body = safe.split('\n').map((line) => `${indent} * ${line.trimEnd()}`.trimEnd())
  return [`${indent}/**`, ...body, `${indent} */`]
}

function literal(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return JSON.stringify(value)
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return undefined
}

function union(types: string[]): string {
  const unique = [...new Set(types)]
  if (unique.includes('unknown')) return 'unknown'
  return unique.length === 0 ? 'never' : unique.join(' | ')
}

function paren(type: string): string {
  return /[|&]/.test(type) ? `(${type})` : type
}

/** The TypeScript type a JSON Schema describes, as far as it can be said simply; `unknown` otherwise. */
function typeOf(schema: unknown, depth: number): string {
  if (schema === true || schema === undefined) return 'unknown'
  if (schema === false) return 'never'
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || depth > MAX_DEPTH) return 'unknown'
  const s = schema as Schema
  if ('const' in s) return literal(s.const) ?? 'unknown'
  if (Array.isArray(s.enum)) {
    const values = s.enum.map(literal)
    return values.every((v) => v !== undefined) ? union(values as string[]) : 'unknown'
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) return union((s[key] as unknown[]).map((item) => typeOf(item, depth + 1)))
  }
  if (Array.isArray(s.allOf)) {
    const parts = (s.allOf as unknown[]).map((item) => typeOf(item, depth + 1)).filter((t) => t !== 'unknown')
    return parts.length === 0 ? 'unknown' : parts.map(paren).join(' & ')
  }
  const types = Array.isArray(s.type) ? (s.type as unknown[]) : s.type === undefined ? undefined : [s.type]
  if (!types) return s.properties !== undefined ? objectType(s, depth) : 'unknown'
  return union(types.map((type) => single(type, s, depth)))
}

function single(type: unknown, s: Schema, depth: number): string {
  switch (type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array':
      if (Array.isArray(s.prefixItems)) return `[${(s.prefixItems as unknown[]).map((item) => typeOf(item, depth + 1)).join(', ')}]`
      if (Array.isArray(s.items)) return `[${(s.items as unknown[]).map((item) => typeOf(item, depth + 1)).join(', ')}]`
      return `${paren(typeOf(s.items, depth + 1))}[]`
    case 'object':
      return objectType(s, depth)
    default:
      return 'unknown'
  }
}

function objectType(s: Schema, depth: number): string {
  const properties = s.properties && typeof s.properties === 'object' && !Array.isArray(s.properties) ? (s.properties as Schema) : {}
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : [])
  const indent = '  '.repeat(depth + 1)
  const members: string[] = []
  for (const [key, value] of Object.entries(properties)) {
    const description = value && typeof value === 'object' ? (value as Schema).description : undefined
    members.push(...comment(description, indent))
    const name = IDENTIFIER.test(key) ? key : JSON.stringify(key)
    members.push(`${indent}${name}${required.has(key) ? '' : '?'}: ${typeOf(value, depth + 1)};`)
  }
  const extra = s.additionalProperties
  // Beside named members the index signature must admit their types too: unknown.
  if (extra !== undefined && extra !== false) members.push(`${indent}[key: string]: ${extra === true || members.length > 0 ? 'unknown' : typeOf(extra, depth + 1)};`)
  else if (extra === undefined && members.length === 0) return 'Record<string, unknown>'
  if (members.length === 0) return '{}'
  return `{\n${members.join('\n')}\n${'  '.repeat(depth)}}`
}

import { type Diagnostic, shortPath, withoutLocation } from '../features/diagnostic.js'
import type { GenerationDiff } from '../runtime/generations/instrumentation.js'
import type { ProviderStatus } from '../seams/types.js'
import type { Style } from './io.js'

/** One type error, located in its file. */
export interface TypeProblem {
  readonly file: string
  readonly line: number
  readonly column: number
  readonly code: number
  readonly message: string
  readonly frame: string | undefined
}

/** `+search_files ~read_file -old_tool +skill:triage`, or `no changes`. */
export function formatDiff(diff: GenerationDiff, style: Style): string {
  // Names may come from remote providers: escaped like every other remote string.
  const tokens = (part: GenerationDiff['tools'], prefix: string) => [
    ...part.added.map((n) => style.green(`+${prefix}${printable(n)}`)),
    ...part.changed.map((n) => style.yellow(`~${prefix}${printable(n)}`)),
    ...part.removed.map((n) => style.red(`-${prefix}${printable(n)}`)),
  ]
  const all = [...tokens(diff.tools, ''), ...tokens(diff.skills, 'skill:')]
  return all.length === 0 ? style.dim('no changes') : all.join(' ')
}

/** `generation 4 live: +search_files ~read_file (18 ms)` */
export function formatPublish(generation: number, diff: GenerationDiff, durationMs: number, style: Style): string {
  return `${style.bold(`generation ${generation} live:`)} ${formatDiff(diff, style)} ${style.dim(`(${ms(durationMs)})`)}`
}

/**
 * `tools/x.ts:3:10 message` and the code frame, indented; the file relative to `dir` when inside it.
 * A provider's diagnostic carries text a remote server chose: every part is shown escaped.
 */
export function formatDiagnostic(d: Diagnostic, style: Style, dir?: string): string {
  // Without a file the message names what failed itself (`plugin "support" failed to set up: …`).
  const where = printable(d.file ? [shortPath(d.file, dir), d.line, d.column].filter((v) => v !== undefined).join(':') : d.code)
  const message = printableLines(d.file ? withoutLocation(d.message, d.file, dir) : d.message)
  const head = `${style.bold(where)} ${style.red(message)}`
  if (!d.frame) return head
  return `${head}\n${printableLines(d.frame)
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}`
}

/** `tools/x.ts:3:10 TS2322 message` and its code frame, indented, as `seam check` and `seam dev` print a type error. */
export function formatTypeProblem(p: TypeProblem, style: Style, dir: string): string {
  const head = `${style.bold(printable(`${shortPath(p.file, dir)}:${p.line}:${p.column}`))} ${style.red(`TS${p.code}`)} ${printableLines(p.message)}`
  if (!p.frame) return head
  return `${head}\n${printableLines(p.frame)
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}`
}

/**
 * One provider's status: `everything  down  retrying in 2 s: connecting failed: fetch failed (ECONNREFUSED)`.
 * The id and the reason come from providers and remote servers: escaped.
 */
export function formatProvider(status: ProviderStatus, style: Style, now = Date.now()): string {
  const name = style.bold(printable(status.provider))
  if (status.state === 'connected') return `${name}  ${style.green('connected')}${status.reason ? style.dim(`  ${printable(status.reason)}`) : ''}`
  const retry = status.retryAt !== undefined ? `  retrying in ${Math.max(0, Math.ceil((status.retryAt - now) / 1000))} s` : ''
  const why = status.reason ? `: ${printable(status.reason)}` : ''
  return `${name}  ${style.yellow(status.state)}${retry}${why}`
}

export function ms(durationMs: number): string {
  return durationMs < 10 ? `${Math.round(durationMs * 10) / 10} ms` : `${Math.round(durationMs)} ms`
}

/** One line for a tool's input schema: `path: string, offset?: integer`. */
export function schemaSummary(schema: unknown): string {
  if (!isObject(schema)) return '(any)'
  const properties = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const fields = Object.entries(properties).map(([key, value]) => `${key}${required.has(key) ? '' : '?'}: ${typeName(value, 0)}`)
  if (fields.length === 0) return schema.type === 'object' || schema.type === undefined ? '(no arguments)' : typeName(schema, 0)
  return fields.join(', ')
}

function typeName(schema: unknown, depth: number): string {
  if (!isObject(schema)) return schema === true ? 'any' : 'never'
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.slice(0, 4).map((v) => JSON.stringify(v))
    return schema.enum.length > 4 ? `${values.join(' | ')} | …` : values.join(' | ')
  }
  if ('const' in schema) return JSON.stringify(schema.const)
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
  if (union) return depth > 2 ? '…' : union.map((s) => typeName(s, depth + 1)).join(' | ')
  if (Array.isArray(schema.type)) return schema.type.join(' | ')
  if (schema.type === 'array') {
    const item = depth > 2 ? '…' : typeName(schema.items ?? true, depth + 1)
    return item.includes(' | ') ? `(${item})[]` : `${item}[]`
  }
  return typeof schema.type === 'string' ? schema.type : 'any'
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** Pads columns so a table lines up; the last column is never padded. */
export function table(rows: readonly (readonly string[])[], gap = '  '): string[] {
  const widths: number[] = []
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell))
  }
  return rows.map((row) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - visibleLength(cell)))).join(gap).trimEnd(),
  )
}

function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes
  return text.replace(/\x1b\[[0-9;]*m/g, '').length
}

/**
 * Text from the journal or a client (call ids, tool names, arguments, summaries) made safe for a
 * terminal: control characters (ANSI escapes included) are shown escaped (ESC as `\u001b`) instead of acting.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what is escaped
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, escapeControl)
}

/** `printable` for text of several lines (tool output, error messages): newlines and tabs are kept. */
export function printableLines(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what is escaped
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, escapeControl)
}

function escapeControl(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
}

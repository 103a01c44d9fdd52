import path from 'node:path'
import type { ErrorCode } from '../errors.js'

/** A problem found while building a generation: shown with a code frame, never fatal to the active one. */
export interface Diagnostic {
  readonly code: ErrorCode
  readonly message: string
  readonly file?: string
  /** 1-based. */
  readonly line?: number
  /** 1-based. */
  readonly column?: number
  /** A few source lines around the location, with a caret under the column. */
  readonly frame?: string
  /** The provider or plugin the problem belongs to, when not a file. */
  readonly source?: string
}

/** `file` relative to `dir` when it lies inside it (as a person reads it beside the plugin), else as given. */
export function shortPath(file: string, dir?: string): string {
  if (!dir || !path.isAbsolute(file)) return file
  const relative = path.relative(dir, file)
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative
}

/** Loader messages often start with the location shown in front of them already: say it once. */
export function withoutLocation(message: string, file: string, dir?: string): string {
  const lead = /^(\S+?)(?::\d+){0,2}:\s+/.exec(message)
  if (lead === null) return message
  const named = lead[1]!
  const same = named === file || path.resolve(dir ?? process.cwd(), named) === path.resolve(file)
  return same ? message.slice(lead[0].length) : message
}

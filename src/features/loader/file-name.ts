import { basename, extname, isAbsolute, relative } from 'node:path'

/** Tool and skill names come from file stems and must read the same to a model and a shell. */
export const FEATURE_NAME = /^[a-z0-9][a-z0-9_-]*$/

/** The file name without its last extension: `tools/lookup_ticket.ts` → `lookup_ticket`. */
export function fileStem(file: string): string {
  const base = basename(file)
  return base.slice(0, base.length - extname(base).length)
}

/** The path as messages show it: relative to `relativeTo` (default the working folder) when inside it. */
export function displayPath(file: string, relativeTo: string = process.cwd()): string {
  const rel = relative(relativeTo, file)
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? file : rel
}

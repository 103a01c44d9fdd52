import { SourceMap, type SourceMapPayload } from 'node:module'

/** A 1-based position in an original source file. */
export interface SourceLocation {
  readonly file: string
  readonly line: number
  readonly column: number
}

/** One loaded bundle's map. Only map data lives here: never the module, its exports or its code. */
interface Entry {
  readonly virtualName: string
  readonly payload: SourceMapPayload
  parsed: SourceMap | undefined
  /** Objects whose collection ends this entry; 0 means only `release()` ends it. */
  holders: number
}

/** What `registerSourceMap` hands the loader for one bundle. */
export interface RegisteredSourceMap {
  /** The filename to compile the bundle under; stack frames carrying it are mapped. */
  readonly virtualName: string
  /** Keeps the map while `target` is reachable (a FinalizationRegistry, so a dropped module frees it too). */
  holdWhileAlive(target: unknown): void
  /** Drops the map now. Idempotent. */
  release(): void
}

const entries = new Map<number, Entry>()
let nextId = 0

const finalizer = new FinalizationRegistry<number>((id) => {
  const entry = entries.get(id)
  if (entry !== undefined && --entry.holders <= 0) entries.delete(id)
})

// `at fn (/abs/tools/x.ts?seam=12:34:5)` — the id picks the entry, then line and column.
const VIRTUAL_FRAME = /\?seam=(\d+):(\d+):(\d+)/

/**
 * Registers the map of a bundle about to be evaluated and names its virtual file, unique per load so
 * frames of two versions of one tool are told apart. `payload.sources` must be absolute paths.
 */
export function registerSourceMap(file: string, payload: SourceMapPayload): RegisteredSourceMap {
  const id = ++nextId
  const virtualName = `${file}?seam=${id}`
  const entry: Entry = { virtualName, payload, parsed: undefined, holders: 0 }
  entries.set(id, entry)
  return {
    virtualName,
    holdWhileAlive(target) {
      if ((typeof target !== 'object' && typeof target !== 'function') || target === null) return
      if (!entries.has(id)) return
      entry.holders++
      finalizer.register(target, id, entry)
    },
    release() {
      if (entries.delete(id)) finalizer.unregister(entry)
    },
  }
}

/** How many bundle maps are held; for leak tests. */
export function sourceMapCount(): number {
  return entries.size
}

/**
 * The original `.ts` position of the first stack frame that belongs to a loaded bundle, following
 * `cause` when the error itself carries none; a located `SeamError` answers with its details.
 */
export function locateError(error: unknown): SourceLocation | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    for (const line of stackOf(current).split('\n')) {
      const hit = mapFrame(line)
      if (hit !== undefined) return hit.location
    }
    const details = (current as { details?: unknown }).details
    if (isLocation(details)) return { file: details.file, line: details.line, column: details.column }
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** The error's stack with every frame of a loaded bundle rewritten to its original file, line and column. */
export function mapStack(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const stack = stackOf(error)
  if (stack === '') return undefined
  return stack
    .split('\n')
    .map((line) => {
      const hit = mapFrame(line)
      if (hit === undefined) return line
      const { file, line: l, column } = hit.location
      return line.replace(hit.text, `${file}:${l}:${column}`)
    })
    .join('\n')
}

/** Where in a tool file a thrown error points, and its stack source-mapped, for `tool/result` details. */
export function locate(error: unknown): Record<string, unknown> | undefined {
  const at = locateError(error)
  if (at === undefined) return undefined
  const stack = mapStack(error)
  return stack === undefined ? { file: at.file, line: at.line, column: at.column } : { file: at.file, line: at.line, column: at.column, stack }
}

function mapFrame(text: string): { location: SourceLocation; text: string } | undefined {
  const match = VIRTUAL_FRAME.exec(text)
  if (match === null) return undefined
  const entry = entries.get(Number(match[1]))
  if (entry === undefined) return undefined
  const generated = `${entry.virtualName}:${match[2]}:${match[3]}`
  if (!text.includes(generated)) return undefined
  entry.parsed ??= new SourceMap(entry.payload)
  const found = entry.parsed.findEntry(Number(match[2]) - 1, Number(match[3]) - 1)
  if (!('originalSource' in found)) return undefined
  return {
    location: { file: found.originalSource, line: found.originalLine + 1, column: found.originalColumn + 1 },
    text: generated,
  }
}

function stackOf(error: object): string {
  try {
    const stack = (error as { stack?: unknown }).stack
    return typeof stack === 'string' ? stack : ''
  } catch {
    return ''
  }
}

function isLocation(value: unknown): value is SourceLocation {
  const v = value as Partial<SourceLocation> | null | undefined
  return typeof v?.file === 'string' && typeof v.line === 'number' && typeof v.column === 'number'
}

import { performance } from 'node:perf_hooks'
import { resolve } from 'node:path'
import { messageOf, SeamError } from '../../errors.js'
import { type Bundle, bundleFile } from './bundle.js'
import { codeFrame } from './code-frame.js'
import { defaultExport } from './describe-value.js'
import { evaluateBundle } from './evaluate.js'
import { displayPath } from './file-name.js'
import { locateError, registerSourceMap } from './source-maps.js'

/** How to load a feature file: what its imports resolve to and how its messages name it. */
export interface LoadOptions {
  /** Answered before node resolution: the host passes its own `seam-runtime` (and `zod`) so brands agree. */
  readonly modules: Readonly<Record<string, unknown>>
  /** Messages show paths relative to this folder (default: the working folder). */
  readonly relativeTo?: string
  /** Told how long bundling and evaluating took (`performance.now()` values), for instrumentation. */
  readonly onPhase?: (phase: 'bundle' | 'evaluate', file: string, startedAt: number, endedAt: number) => void
}

/** One evaluation of one file. Nothing else keeps it: drop it and the GC reclaims the instance. */
export interface LoadedModule {
  readonly file: string
  readonly exports: unknown
  /** Absolute paths of the local files bundled, `file` included: what a watcher should follow. */
  readonly dependencies: string[]
  /** Of the bundled code. */
  readonly hash: string
  /**
   * Drops the source map that maps this module's stack frames. Optional: it also goes once both the
   * exports and the default export are collected. Idempotent.
   */
  release(): void
}

/**
 * Bundles `file` with esbuild and evaluates it in a fresh function scope. Bundle errors and errors
 * thrown while evaluating become `LOAD_FAILED` (a `SeamError` thrown by the host, such as
 * `defineTool`'s `INVALID_TOOL`, keeps its code) with the original file, line, column and a frame.
 */
export async function loadModule(file: string, options: LoadOptions): Promise<LoadedModule> {
  return (await reloadModule(file, options, undefined)) as LoadedModule
}

/**
 * `loadModule`, unless the file bundles to `previousHash` (an editor's save without a change, or a
 * second event for one write): then nothing is evaluated and the answer is `undefined`, so the caller
 * keeps its previous instance, module state included.
 */
export async function reloadModule(file: string, options: LoadOptions, previousHash: string | undefined): Promise<LoadedModule | undefined> {
  const path = resolve(file)
  const { onPhase } = options
  const bundling = performance.now()
  let bundle: Bundle
  try {
    bundle = await bundleFile(path, options.relativeTo)
  } finally {
    onPhase?.('bundle', path, bundling, performance.now())
  }
  if (bundle.hash === previousHash) return undefined
  const map = registerSourceMap(path, bundle.map)
  let exports: unknown
  const evaluating = performance.now()
  try {
    exports = evaluateBundle(bundle.code, path, map.virtualName, options.modules)
  } catch (error) {
    const failure = evaluationError(error, path, bundle, options.relativeTo)
    map.release()
    throw failure
  } finally {
    onPhase?.('evaluate', path, evaluating, performance.now())
  }
  // Callers usually keep only the default export (a tool definition), so either one keeps the map.
  map.holdWhileAlive(exports)
  map.holdWhileAlive(defaultExport(exports))
  return { file: path, exports, dependencies: bundle.dependencies, hash: bundle.hash, release: map.release }
}

function evaluationError(error: unknown, file: string, bundle: Bundle, relativeTo?: string): SeamError {
  const code = SeamError.is(error) ? error.code : 'LOAD_FAILED'
  const reason = SeamError.is(error) ? error.message : `threw while loading: ${messageOf(error)}`
  const at = locateError(error)
  if (at === undefined) {
    return new SeamError(code, `${displayPath(file, relativeTo)}: ${reason}`, { cause: error, details: { file } })
  }
  const source = bundle.sources.get(at.file)
  const frame = source === undefined ? undefined : codeFrame(source, at.line, at.column)
  return new SeamError(code, `${displayPath(at.file, relativeTo)}:${at.line}:${at.column}: ${reason}`, {
    cause: error,
    details: { file: at.file, line: at.line, column: at.column, frame },
  })
}

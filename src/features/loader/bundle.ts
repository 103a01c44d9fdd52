import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { SourceMapPayload } from 'node:module'
import { dirname, resolve } from 'node:path'
import { build, type Message } from 'esbuild'
import { SeamError } from '../../errors.js'
import { byteColumnToCharColumn, codeFrame } from './code-frame.js'
import { displayPath } from './file-name.js'
import { importMetaPlugin } from './import-meta.js'

/** One feature file bundled to CommonJS with its local imports inlined and packages left external. */
export interface Bundle {
  readonly code: string
  /** The source map with absolute `sources` and without `sourcesContent` (it is in `sources`). */
  readonly map: SourceMapPayload
  /** The original text of every bundled file, for code frames while the bundle loads. */
  readonly sources: ReadonlyMap<string, string>
  /** Absolute paths of the local files in the bundle, the entry included, sorted. */
  readonly dependencies: string[]
  /** Of the bundled code and every bundled file's text: unchanged, the module and its stack frames are. */
  readonly hash: string
}

/**
 * Bundles `file` (absolute). CommonJS because it can be evaluated with `vm.compileFunction`, whose
 * instances the GC reclaims; ESM `import()` caches every version for the life of the process. Each
 * file still sees its own `import.meta` (see import-meta.ts); top-level await is refused.
 */
export async function bundleFile(file: string, relativeTo?: string): Promise<Bundle> {
  const outfile = `${file}.seam.js`
  const cwd = dirname(file)
  const result = await build({
    entryPoints: [file],
    bundle: true,
    packages: 'external',
    // Named too: a tsconfig `paths` entry for seam-runtime (as in this repository) would otherwise
    // inline a second copy of the runtime into every tool instead of the host's own instance.
    external: ['seam-runtime', 'seam-runtime/*'],
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: 'external',
    metafile: true,
    write: false,
    outfile,
    absWorkingDir: cwd,
    charset: 'utf8',
    logLevel: 'silent',
    plugins: [importMetaPlugin],
  }).catch(async (error: unknown) => {
    throw await buildError(error, file, cwd, relativeTo)
  })
  const code = result.outputFiles.find((f) => f.path === outfile)?.text ?? ''
  const rawMap = JSON.parse(result.outputFiles.find((f) => f.path === `${outfile}.map`)?.text ?? '{}')
  const absolute = (rawMap.sources as string[]).map((s) => resolve(cwd, s))
  const sources = new Map(absolute.map((path, i) => [path, String(rawMap.sourcesContent?.[i] ?? '')]))
  const map: SourceMapPayload = {
    version: rawMap.version,
    file: outfile,
    sources: absolute,
    sourcesContent: [],
    names: rawMap.names,
    mappings: rawMap.mappings,
    sourceRoot: '',
  }
  const dependencies = Object.keys(result.metafile.inputs)
    .filter((key) => !/^[a-z-]+:/i.test(key))
    .map((key) => resolve(cwd, key))
    .sort()
  // The source texts too: a comment edit leaves the code alone but moves the lines frames map to.
  const hasher = createHash('sha256').update(code)
  for (const [path, text] of sources) hasher.update(`\0${path}\0${text}`)
  const hash = hasher.digest('hex').slice(0, 16)
  return { code, map, sources, dependencies, hash }
}

async function buildError(error: unknown, file: string, cwd: string, relativeTo?: string): Promise<SeamError> {
  const messages = (error as { errors?: Message[] }).errors
  const first = Array.isArray(messages) ? messages[0] : undefined
  if (first === undefined) {
    return new SeamError('LOAD_FAILED', `${displayPath(file, relativeTo)}: ${errorText(error)}`, {
      cause: error,
      details: { file },
    })
  }
  const topLevelAwait = /top-level await/i.test(first.text)
  const text = topLevelAwait
    ? 'top-level await is not supported in tool and plugin files (they are evaluated synchronously); move the await into execute() or setup()'
    : first.text
  const location = first.location
  if (location === null) {
    return new SeamError('LOAD_FAILED', `${displayPath(file, relativeTo)}: ${text}`, { cause: error, details: { file } })
  }
  const where = resolve(cwd, location.file)
  const column = byteColumnToCharColumn(location.lineText, location.column)
  const source = await readFile(where, 'utf8').catch(() => undefined)
  const frame = codeFrame(source ?? location.lineText, source === undefined ? 1 : location.line, column)
  return new SeamError('LOAD_FAILED', `${displayPath(where, relativeTo)}:${location.line}:${column}: ${text}`, {
    cause: error,
    details: { file: where, line: location.line, column, frame },
  })
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

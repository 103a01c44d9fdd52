import { resolve } from 'node:path'
import { SeamError } from '../../errors.js'
import { isToolDefinition, type ToolDefinition } from '../define-tool.js'
import { defaultExport, describeExport } from './describe-value.js'
import { displayPath, FEATURE_NAME, fileStem } from './file-name.js'
import { type LoadOptions, reloadModule } from './load-module.js'

/** A loaded `tools/<name>.ts`: the name is the file stem. */
export interface LoadedToolFile {
  readonly name: string
  readonly definition: ToolDefinition
  readonly dependencies: string[]
  readonly hash: string
  /** Drops the source map of this load; see `LoadedModule.release`. */
  release(): void
}

/**
 * Loads one tool file. Throws `INVALID_TOOL` (naming the file) when its name does not match
 * `[a-z0-9][a-z0-9_-]*` or its default export is not a `defineTool({...})`, and `LOAD_FAILED` when it
 * does not bundle or throws while loading. Answers `previous` itself, without evaluating the file again,
 * when the file still bundles to the same code.
 */
export async function loadToolFile(file: string, options: LoadOptions, previous?: LoadedToolFile): Promise<LoadedToolFile> {
  const path = resolve(file)
  const shown = displayPath(path, options.relativeTo)
  const name = fileStem(path)
  if (!FEATURE_NAME.test(name)) {
    throw new SeamError(
      'INVALID_TOOL',
      `${shown}: a tool file name must match ${FEATURE_NAME.source} (lowercase letters, digits, "_" and "-"); got "${name}"`,
      { details: { file: path, name } },
    )
  }
  const loaded = await reloadModule(path, options, previous?.hash)
  if (loaded === undefined) return previous!
  const definition = defaultExport(loaded.exports)
  if (!isToolDefinition(definition)) {
    loaded.release()
    throw new SeamError(
      'INVALID_TOOL',
      `${shown}: the default export must be defineTool({...}) from 'seam-runtime'; got ${describeExport(definition)}`,
      { details: { file: path, name } },
    )
  }
  return { name, definition, dependencies: loaded.dependencies, hash: loaded.hash, release: loaded.release }
}

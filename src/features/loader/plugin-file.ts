import { resolve } from 'node:path'
import { SeamError } from '../../errors.js'
import { PLUGIN_BRAND, type PluginDefinition } from '../plugin-types.js'
import { defaultExport, describeExport } from './describe-value.js'
import { displayPath } from './file-name.js'
import { type LoadOptions, reloadModule } from './load-module.js'

/** A loaded `plugin.ts`. */
export interface LoadedPluginFile {
  readonly definition: PluginDefinition
  readonly dependencies: string[]
  readonly hash: string
  /** Drops the source map of this load; see `LoadedModule.release`. */
  release(): void
}

/**
 * Loads a plugin folder's `plugin.ts`; its default export must be a plugin definition (recognised by
 * shape, as `definePlugin` may come from another copy of the package), else `INVALID_PLUGIN`. Answers
 * `previous` itself, without evaluating the file again, when the file still bundles to the same code.
 */
export async function loadPluginFile(file: string, options: LoadOptions, previous?: LoadedPluginFile): Promise<LoadedPluginFile> {
  const path = resolve(file)
  const loaded = await reloadModule(path, options, previous?.hash)
  if (loaded === undefined) return previous!
  const definition = defaultExport(loaded.exports)
  if (!isPluginDefinition(definition)) {
    loaded.release()
    throw new SeamError(
      'INVALID_PLUGIN',
      `${displayPath(path, options.relativeTo)}: the default export must be definePlugin({ name, setup }) from 'seam-runtime'; got ${describeExport(definition)}`,
      { details: { file: path } },
    )
  }
  return { definition, dependencies: loaded.dependencies, hash: loaded.hash, release: loaded.release }
}

/** `{ name, setup?, plugins? }`, branded by `definePlugin` or plain. */
export function isPluginDefinition(value: unknown): value is PluginDefinition {
  if (typeof value !== 'object' || value === null) return false
  const v = value as { $seam?: unknown; name?: unknown; setup?: unknown; plugins?: unknown }
  return (
    (v.$seam === undefined || v.$seam === PLUGIN_BRAND) &&
    typeof v.name === 'string' &&
    v.name !== '' &&
    (v.setup === undefined || typeof v.setup === 'function') &&
    (v.plugins === undefined || Array.isArray(v.plugins))
  )
}

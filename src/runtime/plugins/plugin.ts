import { SeamError } from '../../errors.js'
import type { PluginDefinition } from '../../features/plugin-types.js'
import { PLUGIN_BRAND } from '../../features/plugin-types.js'

const NAME = /^[a-z0-9][a-z0-9_-]*$/i

/** Declares a plugin. `setup` may be async and may return a disposer. */
export function definePlugin(definition: PluginDefinition): PluginDefinition {
  if (definition === null || typeof definition !== 'object') {
    throw new SeamError('INVALID_PLUGIN', 'definePlugin expects an object')
  }
  assertPluginName(definition.name)
  if (definition.setup !== undefined && typeof definition.setup !== 'function') {
    throw new SeamError('INVALID_PLUGIN', `plugin "${definition.name}": setup must be a function`)
  }
  if (definition.plugins !== undefined && !Array.isArray(definition.plugins)) {
    throw new SeamError('INVALID_PLUGIN', `plugin "${definition.name}": plugins must be an array`)
  }
  return Object.freeze({ ...definition, $seam: PLUGIN_BRAND })
}

export function assertPluginName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME.test(name) || name.includes('__')) {
    throw new SeamError(
      'INVALID_PLUGIN',
      `plugin name ${JSON.stringify(name)} must match [a-z0-9][a-z0-9_-]* and not contain "__"`,
    )
  }
}

/** Recognised structurally: a plugin file's bundle may hold another module instance. */
export function isPluginDefinition(value: unknown): value is PluginDefinition {
  const v = value as Partial<PluginDefinition> | null
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.name === 'string' &&
    (v.setup === undefined || typeof v.setup === 'function')
  )
}

// seam-runtime/plugin-runtime: what a plugin author needs to declare a plugin and its resources.
export { definePlugin } from './runtime/plugin.js'
export { createToken } from './runtime/resources.js'
export type { Resources, Token } from './runtime/resources.js'
export type { Disposer, PluginContext, PluginDefinition, PluginHooks } from './runtime/plugin-types.js'

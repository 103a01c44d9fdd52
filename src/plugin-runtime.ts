// seam-runtime/plugin-runtime: what a plugin author needs to declare a plugin and its resources.
export { definePlugin } from './runtime/plugins/plugin.js'
export { createToken } from './seams/tokens.js'
export type { Resources, Token } from './seams/tokens.js'
export type { Disposer, PluginContext, PluginDefinition, PluginHooks } from './features/plugin-types.js'

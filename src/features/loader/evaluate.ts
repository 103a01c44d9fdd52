import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { types } from 'node:util'
import { compileFunction } from 'node:vm'

const PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname']

// Keyed by the host's own namespaces, so this never holds anything a plugin module created.
const interop = new WeakMap<object, object>()

/**
 * Runs a CommonJS bundle as a plain function (no module cache, no global registry), so the module
 * instance lives exactly as long as something holds its exports. `require` answers from `modules`
 * first: a tool gets the host's `seam-runtime`, whatever its folder's `node_modules` holds.
 */
export function evaluateBundle(
  code: string,
  file: string,
  virtualName: string,
  modules: Readonly<Record<string, unknown>>,
): unknown {
  const run = compileFunction(code, PARAMETERS, { filename: virtualName })
  const local = createRequire(file)
  const require = Object.assign(
    (specifier: string): unknown =>
      Object.hasOwn(modules, specifier) ? commonJsView(modules[specifier]) : local(specifier),
    { resolve: local.resolve, cache: local.cache, extensions: local.extensions, main: local.main },
  )
  const module = { id: file, filename: file, exports: {} as unknown, loaded: false }
  run.call(module.exports, module.exports, require, module, file, dirname(file))
  module.loaded = true
  return module.exports
}

/** An ESM namespace marked `__esModule`, so a bundle's `import x from 'pkg'` reads its `default`. */
function commonJsView(value: unknown): unknown {
  if (!types.isModuleNamespaceObject(value)) return value
  const namespace = value as object
  let view = interop.get(namespace)
  if (view === undefined) {
    view = Object.freeze({ ...namespace, __esModule: true })
    interop.set(namespace, view)
  }
  return view
}

import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { types } from 'node:util'
import { setFlagsFromString } from 'node:v8'
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
  const run = compileUncached(code, virtualName)
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

/**
 * `vm.compileFunction` past V8's compilation cache. From Node 22 (V8 12) compileFunction puts every
 * compiled function in that cache, keyed by its source; a reload's source is new each time, so the
 * entry is never looked up again, yet keeps the source and its compiled code (a 90 KB bundle: about
 * 110 KB per reload, for the life of the process). The cache is switched off for this one synchronous
 * compile and back on at once; Node 20's compileFunction never used it.
 */
function compileUncached(code: string, filename: string): ReturnType<typeof compileFunction> {
  setFlagsFromString('--no-compilation-cache')
  try {
    return compileFunction(code, PARAMETERS, { filename })
  } finally {
    setFlagsFromString('--compilation-cache')
  }
}

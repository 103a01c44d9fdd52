/** A short phrase for what a file exported instead of what was expected: "a function", "no default export". */
export function describeExport(value: unknown): string {
  if (value === undefined) return 'no default export'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'function') return 'a function'
  if (typeof value !== 'object') return `a ${typeof value}`
  const brand = (value as { $seam?: unknown }).$seam
  if (typeof brand === 'string') return `a ${brand.replace(/^seam-runtime\//, '').replace(/@\d+$/, '')} definition`
  const keys = Object.keys(value).filter((key) => key !== '__esModule')
  return keys.length === 0 ? 'an empty object' : `an object with ${keys.slice(0, 5).join(', ')}`
}

/**
 * The default export of an evaluated bundle: esbuild's ESM → CommonJS puts it on `exports.default`;
 * a CommonJS file that assigns `module.exports` exports the value itself.
 */
export function defaultExport(exports: unknown): unknown {
  if (typeof exports === 'object' && exports !== null && (exports as { __esModule?: unknown }).__esModule === true) {
    return (exports as { default?: unknown }).default
  }
  if (typeof exports === 'object' && exports !== null && 'default' in exports) {
    return (exports as { default?: unknown }).default
  }
  return exports
}

import { isProxy } from 'node:util/types'

/**
 * Finds the first place where `value` is not lossless JSON: something `JSON.stringify` would drop,
 * change or reject (undefined, NaN, ±Infinity, -0, BigInt, functions, symbols, cycles, class
 * instances, sparse arrays). Returns `undefined` when the value round-trips exactly.
 */
export function findLossy(value: unknown): { path: string; problem: string } | undefined {
  // Runs on every completed call: a quick pass that builds no paths and no set, and the exact
  // walk only when the quick pass finds something (or nesting so deep it may be a cycle).
  if (isPlainJson(value, 0, false)) return undefined
  return walk(value, '', new Set())
}

/**
 * `findLossy` and a deep freeze in one walk: each object is frozen once everything inside it has
 * been found lossless. A value that is not lossless may be left partly frozen (it is refused).
 */
export function freezeLossless(value: unknown): { path: string; problem: string } | undefined {
  if (isPlainJson(value, 0, true)) return undefined
  return walk(value, '', new Set())
}

const MAX_QUICK_DEPTH = 64

/**
 * `ownKey.call(object, key)` (`Object.prototype.hasOwnProperty`) on a `for…in` key of that object
 * is answered by the loop's own enumeration in optimized code; `Object.hasOwn` is not, and costs a
 * builtin call per key (about twice the time per small object on Node 20 and 24).
 */
const ownKey = Object.prototype.hasOwnProperty

function isPlainJson(value: unknown, depth: number, freeze: boolean): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0)
    case 'object': {
      if (value === null) return true
      if (depth >= MAX_QUICK_DEPTH) return false
      // A Proxy can answer anything (`toJSON` included) whatever it looks like.
      if (isProxy(value)) return false
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!(i in value) || !isPlainJson(value[i], depth + 1, freeze)) return false
        }
        if (freeze) Object.freeze(value)
        return true
      }
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) return false
      // Symbol keys are dropped by JSON. (Non-enumerable properties and extra keys on arrays are not
      // looked for on this path: listing every own key costs three times as much, on every call.)
      if (Object.getOwnPropertySymbols(value).length > 0) return false
      for (const key in value) {
        if (!ownKey.call(value, key) || !isPlainJson((value as Record<string, unknown>)[key], depth + 1, freeze)) return false
      }
      if (freeze) Object.freeze(value)
      return true
    }
    default:
      return false
  }
}

function walk(value: unknown, path: string, seen: Set<object>): { path: string; problem: string } | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      if (!Number.isFinite(value)) return { path: path || '/', problem: `${value} is not representable in JSON` }
      if (Object.is(value, -0)) return { path: path || '/', problem: '-0 would become 0' }
      return undefined
    case 'undefined':
      return { path: path || '/', problem: 'undefined is not JSON' }
    case 'bigint':
      return { path: path || '/', problem: 'a BigInt is not JSON' }
    case 'function':
    case 'symbol':
      return { path: path || '/', problem: `a ${typeof value} is not JSON` }
  }
  if (value === null) return undefined
  const object = value as object
  if (seen.has(object)) return { path: path || '/', problem: 'a cycle is not JSON' }
  if (isProxy(object)) return { path: path || '/', problem: 'a Proxy is not plain JSON' }
  seen.add(object)
  try {
    if (Array.isArray(object)) {
      for (let i = 0; i < object.length; i++) {
        if (!(i in object)) return { path: `${path}/${i}`, problem: 'a sparse array hole is not JSON' }
        const found = walk(object[i], `${path}/${i}`, seen)
        if (found) return found
      }
      if (Reflect.ownKeys(object).length !== object.length + 1) return { path: path || '/', problem: 'an array with properties besides its items is not JSON' }
      return undefined
    }
    const proto = Object.getPrototypeOf(object)
    if (proto !== Object.prototype && proto !== null) {
      const kind = (object as { constructor?: { name?: string } }).constructor?.name ?? 'object'
      return { path: path || '/', problem: `a ${kind} instance is not plain JSON` }
    }
    if (Object.getOwnPropertySymbols(object).length > 0) return { path: path || '/', problem: 'symbol keys are not JSON' }
    const hidden = Object.getOwnPropertyNames(object).find((key) => !Object.prototype.propertyIsEnumerable.call(object, key))
    if (hidden !== undefined) return { path: `${path}/${hidden}`, problem: 'a non-enumerable property is dropped by JSON' }
    for (const key in object) {
      if (!Object.hasOwn(object, key)) return { path: `${path}/${key}`, problem: 'an inherited property is not JSON' }
    }
    for (const key of Object.keys(object)) {
      const found = walk((object as Record<string, unknown>)[key], `${path}/${key}`, seen)
      if (found) return found
    }
    return undefined
  } finally {
    seen.delete(object)
  }
}

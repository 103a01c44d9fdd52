/**
 * Finds the first place where `value` is not lossless JSON: something `JSON.stringify` would drop,
 * change or reject (undefined, NaN, ±Infinity, -0, BigInt, functions, symbols, cycles, class
 * instances, sparse arrays). Returns `undefined` when the value round-trips exactly.
 */
export function findLossy(value: unknown): { path: string; problem: string } | undefined {
  return walk(value, '', new Set())
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
  seen.add(object)
  try {
    if (Array.isArray(object)) {
      for (let i = 0; i < object.length; i++) {
        if (!(i in object)) return { path: `${path}/${i}`, problem: 'a sparse array hole is not JSON' }
        const found = walk(object[i], `${path}/${i}`, seen)
        if (found) return found
      }
      return undefined
    }
    const proto = Object.getPrototypeOf(object)
    if (proto !== Object.prototype && proto !== null) {
      const kind = (object as { constructor?: { name?: string } }).constructor?.name ?? 'object'
      return { path: path || '/', problem: `a ${kind} instance is not plain JSON` }
    }
    if (Object.getOwnPropertySymbols(object).length > 0) return { path: path || '/', problem: 'symbol keys are not JSON' }
    for (const key of Object.keys(object)) {
      const found = walk((object as Record<string, unknown>)[key], `${path}/${key}`, seen)
      if (found) return found
    }
    return undefined
  } finally {
    seen.delete(object)
  }
}

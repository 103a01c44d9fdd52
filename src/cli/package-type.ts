import { readdir } from 'node:fs/promises'
import path from 'node:path'

/** Where a top-level key of a JSON object text is: its key's start and its value's span. */
interface TopLevelEntry {
  readonly keyStart: number
  readonly keyEnd: number
  readonly valueStart: number
  readonly valueEnd: number
}

/**
 * The top-level entries of a JSON object text by key, found by scanning it (strings, escapes and
 * nesting), so an edit can replace one value and leave every other byte as it was. Undefined when
 * the text is not a JSON object.
 */
export function topLevelEntries(text: string): Map<string, TopLevelEntry> | undefined {
  const entries = new Map<string, TopLevelEntry>()
  let depth = 0
  let i = 0
  let key: { name: string; start: number; end: number } | undefined
  let value: { name: string; keyStart: number; keyEnd: number; start: number } | undefined
  const endString = (from: number) => {
    let j = from + 1
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
    return j + 1
  }
  const close = (end: number) => {
    if (value === undefined) return
    let last = end
    while (last > value.start && /\s/.test(text[last - 1]!)) last--
    entries.set(value.name, { keyStart: value.keyStart, keyEnd: value.keyEnd, valueStart: value.start, valueEnd: last })
    value = undefined
  }
  while (i < text.length) {
    const c = text[i]!
    if (c === '"') {
      const end = endString(i)
      if (depth === 1 && value === undefined && key === undefined) key = { name: JSON.parse(text.slice(i, end)) as string, start: i, end }
      i = end
      continue
    }
    if (c === ':' && depth === 1 && key !== undefined) {
      let start = i + 1
      while (start < text.length && /\s/.test(text[start]!)) start++
      value = { name: key.name, keyStart: key.start, keyEnd: key.end, start }
      key = undefined
    } else if (c === '{' || c === '[') {
      depth++
    } else if (c === '}' || c === ']') {
      if (depth === 1) close(i)
      depth--
    } else if (c === ',' && depth === 1) {
      close(i)
    }
    i++
  }
  return depth === 0 && text.trimStart().startsWith('{') ? entries : undefined
}

/** `text` with the top-level `"type"` set to `"module"`: replaced in place, or added before the first key. */
export function withModuleType(text: string): string | undefined {
  const entries = topLevelEntries(text)
  if (entries === undefined) return undefined
  const type = entries.get('type')
  if (type !== undefined) return `${text.slice(0, type.valueStart)}"module"${text.slice(type.valueEnd)}`
  const first = [...entries.values()].sort((a, b) => a.keyStart - b.keyStart)[0]
  if (first === undefined) {
    const open = text.indexOf('{')
    return `${text.slice(0, open + 1)}"type": "module"${text.slice(open + 1)}`
  }
  // The first entry's own spacing (`"name": ` or `"name":`), line and indentation, so the new one looks like it.
  const colon = text.slice(first.keyEnd, first.valueStart)
  const lineStart = text.lastIndexOf('\n', first.keyStart) + 1
  const lead = text.slice(lineStart, first.keyStart)
  const separator = /^\s*$/.test(lead) && lineStart > 0 ? `,\n${lead}` : colon.includes(' ') ? ', ' : ','
  return `${text.slice(0, first.keyStart)}"type"${colon}"module"${separator}${text.slice(first.keyStart)}`
}

/**
 * The project's `.js` and `.jsx` files (outside node_modules and dot folders): a change of
 * `"type"` would turn them from CommonJS into ES modules. Stops at `limit`.
 */
export async function javaScriptFiles(dir: string, limit = 5): Promise<string[]> {
  const found: string[] = []
  const walk = async (folder: string, depth: number): Promise<void> => {
    if (depth > 6 || found.length >= limit) return
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      if (found.length >= limit) return
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) await walk(full, depth + 1)
      else if (/\.jsx?$/.test(entry.name)) found.push(path.relative(dir, full))
    }
  }
  await walk(dir, 0)
  return found
}

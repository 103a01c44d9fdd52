import { type Child, h } from './dom.js'

type Schema = Record<string, unknown>

/** A JSON Schema as a readable table of fields (name, type, required, description), nested objects indented. */
export function schemaView(schema: unknown, label: string): HTMLElement {
  const rows: HTMLElement[] = []
  walk(schema, '', rows, 0)
  const raw = h('details', null, h('summary', null, `${label}: JSON Schema`), h('pre', { class: 'json' }, JSON.stringify(schema, null, 2)))
  if (rows.length === 0) return h('div', { class: 'schema' }, h('p', { class: 'muted' }, `${label}: no fields`), raw)
  return h(
    'div',
    { class: 'schema' },
    h(
      'table',
      null,
      h('caption', null, label),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'field'), h('th', { scope: 'col' }, 'type'), h('th', { scope: 'col' }, 'description'))),
      h('tbody', null, rows),
    ),
    raw,
  )
}

function walk(schema: unknown, prefix: string, rows: HTMLElement[], depth: number): void {
  if (!isObject(schema) || depth > 6) return
  const properties = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
  for (const [name, child] of Object.entries(properties)) {
    const path = prefix ? `${prefix}.${name}` : name
    const field: Child[] = [h('code', null, path)]
    if (required.has(name)) field.push(' ', h('span', { class: 'badge info' }, 'required'))
    rows.push(h('tr', null, h('td', null, field), h('td', null, typeOf(child)), h('td', null, isObject(child) ? String(child.description ?? '') : '')))
    if (isObject(child)) {
      walk(child, path, rows, depth + 1)
      if (isObject(child.items)) walk(child.items, `${path}[]`, rows, depth + 1)
    }
  }
}

export function typeOf(schema: unknown): string {
  if (!isObject(schema)) return 'any'
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ')
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  const union = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined
  if (Array.isArray(union)) return union.map(typeOf).join(' | ')
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : String(schema.type ?? 'any')
  if (type === 'array') return `${typeOf(schema.items)}[]`
  return type
}

export function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

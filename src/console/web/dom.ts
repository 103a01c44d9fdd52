/**
 * The page's only way to make DOM: elements from tags, attributes and children, where every string
 * child becomes a text node. Nothing here (or anywhere in the page) assigns HTML, so journal text,
 * tool output and skill files can never become markup.
 */
export type Child = Node | string | number | null | undefined | false | readonly Child[]

type Handler = (event: Event) => void
export type Props = Record<string, string | number | boolean | Handler | null | undefined>

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value)
    else if (name === 'value') (element as HTMLInputElement).value = String(value)
    else element.setAttribute(name, value === true ? '' : String(value))
  }
  append(element, children)
  return element
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (Array.isArray(child)) append(parent, child)
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)))
  }
}

/** Replaces everything inside `parent` with `children`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild)
  append(parent, children)
}

export function time(at: number): string {
  return new Date(at).toLocaleTimeString(undefined, { hour12: false })
}

export function ms(value: number): string {
  return value < 10 ? `${value.toFixed(1)} ms` : `${Math.round(value)} ms`
}

/** A status chip: the word is always there, the colour only repeats it. */
export function badge(text: string, tone: 'ok' | 'bad' | 'warn' | 'info' | 'muted' = 'muted'): HTMLElement {
  return h('span', { class: `badge ${tone}` }, text)
}

export function toneOf(status: string | undefined): 'ok' | 'bad' | 'warn' | 'muted' {
  if (status === 'completed') return 'ok'
  if (status === 'failed') return 'bad'
  if (status === 'denied' || status === 'cancelled') return 'warn'
  return 'muted'
}

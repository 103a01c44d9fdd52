import { type Child, h } from './dom.js'

/**
 * A small Markdown renderer for skill instructions that builds DOM nodes, never HTML: headings,
 * paragraphs, lists, fenced code, inline code, bold, italics and links (http, https and mailto only).
 * Raw HTML in the source shows as text, which is how an untrusted skill file must show it.
 */
export function markdown(source: string): HTMLElement {
  const root = h('div', { class: 'markdown' })
  const lines = source.replace(/\r\n?/g, '\n').split('\n')
  let index = 0
  while (index < lines.length) {
    const line = lines[index]!
    const fence = /^```(.*)$/.exec(line)
    if (fence) {
      const code: string[] = []
      index += 1
      while (index < lines.length && !/^```\s*$/.test(lines[index]!)) code.push(lines[index++]!)
      index += 1
      root.append(h('pre', null, h('code', null, code.join('\n'))))
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading) {
      // Skill headings sit under the page's own: shifted down two levels.
      const level = Math.min(6, heading[1]!.length + 2) as 3 | 4 | 5 | 6
      root.append(h(`h${level}`, null, inline(heading[2]!)))
      index += 1
      continue
    }
    if (/^\s*([-*+]|\d+\.)\s+/.test(line)) {
      const ordered = /^\s*\d+\./.test(line)
      const list = h(ordered ? 'ol' : 'ul')
      while (index < lines.length && /^\s*([-*+]|\d+\.)\s+/.test(lines[index]!)) {
        list.append(h('li', null, inline(lines[index]!.replace(/^\s*([-*+]|\d+\.)\s+/, ''))))
        index += 1
      }
      root.append(list)
      continue
    }
    if (line.trim() === '') {
      index += 1
      continue
    }
    const paragraph: string[] = []
    while (index < lines.length && lines[index]!.trim() !== '' && !/^(```|#{1,6}\s|\s*([-*+]|\d+\.)\s)/.test(lines[index]!)) paragraph.push(lines[index++]!)
    root.append(h('p', null, inline(paragraph.join(' '))))
  }
  return root
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*]+\*|_[^_]+_)|(\[[^\]]+\]\([^)\s]+\))/

function inline(text: string): Child[] {
  const out: Child[] = []
  let rest = text
  for (let match = INLINE.exec(rest); match; match = INLINE.exec(rest)) {
    if (match.index > 0) out.push(rest.slice(0, match.index))
    const token = match[0]
    if (match[1]) out.push(h('code', null, token.slice(1, -1)))
    else if (match[2]) out.push(h('strong', null, token.slice(2, -2)))
    else if (match[3]) out.push(h('em', null, token.slice(1, -1)))
    else out.push(link(token))
    rest = rest.slice(match.index + token.length)
  }
  if (rest) out.push(rest)
  return out
}

function link(token: string): Child {
  const [, label, href] = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(token)!
  if (!/^(https?:|mailto:)/i.test(href!)) return label!
  return h('a', { href: href!, rel: 'noopener noreferrer', target: '_blank' }, label!)
}

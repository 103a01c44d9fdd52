import type { ContentBlock } from '../types.js'
import { h } from './dom.js'

/** Raster types only: an image is shown through a `data:` URL, which for these cannot run anything. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

/** A call's content as it is: text as text (markup in it stays visible as characters), images as images. */
export function contentView(content: readonly ContentBlock[]): HTMLElement {
  if (content.length === 0) return h('p', { class: 'muted' }, 'no content')
  return h(
    'div',
    { class: 'content' },
    content.map((block) => {
      if (block.type === 'text') return h('pre', { class: 'text' }, block.text)
      if (block.type === 'image' && IMAGE_TYPES.has(block.mimeType) && /^[A-Za-z0-9+/]*={0,2}$/.test(block.data)) {
        return h('img', { src: `data:${block.mimeType};base64,${block.data}`, alt: `image result (${block.mimeType})` })
      }
      return h('p', { class: 'muted' }, `[${String((block as { type: unknown }).type)} content not shown]`)
    }),
  )
}

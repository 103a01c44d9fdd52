import type { ContentBlock } from '../types.js'
import { h } from './dom.js'

/** Raster types only: an image is shown through a `data:` URL, which for these cannot run anything. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** A call's content as it is: text as text (markup in it stays visible as characters), images and audio as such, resources named. */
export function contentView(content: readonly ContentBlock[]): HTMLElement {
  if (content.length === 0) return h('p', { class: 'muted' }, 'no content')
  return h(
    'div',
    { class: 'content' },
    content.map((block) => {
      if (block.type === 'text') return h('pre', { class: 'text' }, block.text)
      if (block.type === 'image' && IMAGE_TYPES.has(block.mimeType) && BASE64.test(block.data)) {
        return h('img', { src: `data:${block.mimeType};base64,${block.data}`, alt: `image result (${block.mimeType})` })
      }
      if (block.type === 'audio' && /^audio\/[\w.+-]+$/.test(block.mimeType) && BASE64.test(block.data)) {
        return h('audio', { controls: true, src: `data:${block.mimeType};base64,${block.data}`, 'aria-label': `audio result (${block.mimeType})` })
      }
      if (block.type === 'resource_link') {
        const label = `${block.title ?? block.name} (${block.uri})`
        return h('p', null, 'resource: ', /^https?:/i.test(block.uri) ? h('a', { href: block.uri, rel: 'noopener noreferrer', target: '_blank' }, label) : label)
      }
      if (block.type === 'resource') {
        const { resource } = block
        return 'text' in resource
          ? h('div', null, h('p', { class: 'muted' }, `resource ${resource.uri}`), h('pre', { class: 'text' }, resource.text))
          : h('p', { class: 'muted' }, `resource ${resource.uri}: ${resource.blob.length} base64 characters (${resource.mimeType ?? 'binary'})`)
      }
      return h('p', { class: 'muted' }, `[${String((block as { type: unknown }).type)} content not shown]`)
    }),
  )
}

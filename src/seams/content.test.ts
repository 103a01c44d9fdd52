import { describe, expect, it } from 'vitest'
import { checkContent, contentText } from './content.js'

describe('checkContent', () => {
  it('accepts every MCP block shape and copies only the known fields', () => {
    const blocks = [
      { type: 'text', text: 'hi', annotations: { audience: ['assistant'], priority: 1 }, _meta: { x: 1 } },
      { type: 'image', data: 'AA==', mimeType: 'image/png' },
      { type: 'audio', data: 'AA==', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///a', name: 'a', title: 'A', size: 3 },
      { type: 'resource', resource: { uri: 'file:///b', mimeType: 'text/plain', text: 'b' } },
      { type: 'resource', resource: { uri: 'file:///c', blob: 'AA==' } },
    ]
    const checked = checkContent(blocks)
    expect(checked.ok && checked.content[0]).toEqual({ type: 'text', text: 'hi', annotations: { audience: ['assistant'], priority: 1 } })
    expect(checked.ok && checked.content.slice(1)).toEqual(blocks.slice(1))
    expect(checked.ok && checked.content[4]).not.toBe(blocks[4])
  })

  it.each([
    ['not an array', { type: 'text', text: 'x' }],
    ['an unknown type', [{ type: 'hologram' }]],
    ['a text block without text', [{ type: 'text' }]],
    ['an image without a mime type', [{ type: 'image', data: 'AA==' }]],
    ['a resource with both text and blob', [{ type: 'resource', resource: { uri: 'u', text: 'a', blob: 'b' } }]],
    ['a link with a size that is not a number', [{ type: 'resource_link', uri: 'u', name: 'n', size: '3' }]],
    ['an audience that is not user or assistant', [{ type: 'text', text: 'x', annotations: { audience: ['root'] } }]],
    ['a getter that throws', [Object.defineProperty({ type: 'text' }, 'text', { get: () => { throw new Error('no') }, enumerable: true })]],
  ])('refuses %s', (_what, content) => {
    expect(checkContent(content).ok).toBe(false)
  })
})

describe('contentText', () => {
  it('shows text as it is and every other block as a short bracketed line', () => {
    expect(contentText([
      { type: 'text', text: 'hi' },
      { type: 'image', data: 'A'.repeat(2000), mimeType: 'image/png' },
      { type: 'resource_link', uri: 'file:///a', name: 'a' },
      { type: 'resource', resource: { uri: 'file:///b', text: 'body' } },
    ])).toBe('hi\n[image image/png, 2,000 base64 chars]\n[resource link file:///a]\n[resource file:///b]\nbody')
  })
})

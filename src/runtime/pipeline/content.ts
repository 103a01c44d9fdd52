/** What a call hands the model as text: a text block (`text`), and a deferred context message, checked and frozen (`toDeferred`). */
import type { DeferredContext } from '../../seams/calls.js'
import type { ContentBlock } from '../../seams/journal.js'

export function text(value: string): ContentBlock[] {
  return [{ type: 'text', text: value }]
}

let contextSeq = 0

export function toDeferred(input: string | { id?: string; role?: 'user' | 'system'; content: string }): DeferredContext {
  const message = typeof input === 'string' ? { content: input } : input
  if (typeof message?.content !== 'string') throw new TypeError('a deferred context needs string content')
  return Object.freeze({
    id: message.id ?? `ctx-${++contextSeq}`,
    role: message.role === 'system' ? 'system' : 'user',
    content: message.content,
  })
}

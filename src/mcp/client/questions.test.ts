import { describe, expect, it } from 'vitest'
import { contextWith } from '../fixtures/test-helpers.js'
import { askThrough, withDefaults } from './questions.js'

const schema = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, default: 'John Doe' },
    age: { type: 'integer' as const, default: 30 },
    verified: { type: 'boolean' as const, default: true },
    note: { type: 'string' as const },
  },
}

describe('a mounted server’s question', () => {
  it('carries the schema’s defaults for the fields the person left unanswered, and keeps the answered ones (SEP-1034)', async () => {
    const ask = async () => ({ action: 'accept' as const, content: { age: 41 } })
    const answer = await askThrough({ ...contextWith(new AbortController().signal), ask }, { mode: 'form', message: 'Who?', requestedSchema: schema }, new AbortController().signal, (text) => text)
    expect(answer).toEqual({ action: 'accept', content: { name: 'John Doe', age: 41, verified: true } })
  })

  it('reaches the person redacted, and is declined without a call to ask for, for a URL-mode question, or when asking throws', async () => {
    const heard: string[] = []
    const ask = async (question: { message: string }) => {
      heard.push(question.message)
      return { action: 'decline' as const }
    }
    const context = { ...contextWith(new AbortController().signal), ask }
    const signal = new AbortController().signal
    const hide = (text: string) => text.replaceAll('sk-secret', '***')
    expect(await askThrough(context, { mode: 'form', message: 'token sk-secret?', requestedSchema: schema }, signal, hide)).toEqual({ action: 'decline' })
    expect(heard).toEqual(['token ***?'])
    expect(await askThrough(undefined, { mode: 'form', message: 'm', requestedSchema: schema }, signal, hide)).toEqual({ action: 'decline' })
    expect(await askThrough(context, { mode: 'url', message: 'm', url: 'https://example.org', elicitationId: 'e1' }, signal, hide)).toEqual({ action: 'decline' })
    const failing = { ...context, ask: () => Promise.reject(new Error('INVALID_QUESTION')) }
    expect(await askThrough(failing, { mode: 'form', message: 'm', requestedSchema: schema }, signal, hide)).toEqual({ action: 'decline' })
  })

  it('keeps a default named __proto__ a plain field, never the answer’s prototype', () => {
    const hostile = JSON.parse('{"properties":{"__proto__":{"default":{"polluted":true}}}}')
    const filled = withDefaults(hostile, {})
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype)
    expect(Object.keys(filled)).toEqual(['__proto__'])
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
  })
})

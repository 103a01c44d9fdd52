import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { EVERY_SHAPE } from '../../test/question-shapes.js'
import { styleFor } from './io.js'
import { terminalQuestions } from './question-prompt.js'

function answering(lines: string[]) {
  const output = new PassThrough()
  let shown = ''
  output.on('data', (chunk: Buffer) => {
    shown += chunk.toString()
  })
  const port = terminalQuestions(async (prompt) => {
    shown += prompt
    return lines.shift()
  }, output, styleFor(output, {}))
  const ask = () => port.elicit!({ questionId: 'q1', callId: 'c1', name: 'profile', turnId: 't', message: 'Your profile?', schema: EVERY_SHAPE, signal: new AbortController().signal })
  return { ask, shown: () => shown }
}

describe('terminalQuestions', () => {
  it('shows each field with its choices and default, and reads choices by number, value or title', async () => {
    const { ask, shown } = answering(['yes', 'Ada', '', 'x', '36', '0.25', 'y', 'free', '2', 'Option B', 'y, z', 'Red'])
    // An empty required-less field is left out; "x" is not a number, so age is asked again.
    expect(await ask()).toEqual({ action: 'accept', content: { name: 'Ada', age: 36, ratio: 0.25, subscribe: true, plan: 'free', region: 'us', legacy: 'b', tags: ['y', 'z'], colors: ['r'] } })
    expect(shown()).toContain('region [1] Europe [2] United States (optional):')
    expect(shown()).toContain('ratio (default 0.5):')
    expect(shown()).toContain('tags [1] x [2] y [3] z (comma-separated) (default ["x"]):')
    expect(shown()).toContain('answer a whole number')
  })

  it('declines on n, and cancels at end of input or after three unreadable answers', async () => {
    expect(await answering(['n']).ask()).toEqual({ action: 'decline' })
    expect(await answering([]).ask()).toEqual({ action: 'cancel' })
    expect(await answering(['y', '', '', '']).ask()).toEqual({ action: 'cancel' })
  })

  it('never shows a question withdrawn while it waits its turn, and says so of one withdrawn while shown', async () => {
    const output = new PassThrough()
    let shown = ''
    output.on('data', (chunk: Buffer) => {
      shown += chunk.toString()
    })
    // The first question's prompt waits until its signal aborts (answered in the console, say).
    const port = terminalQuestions(
      (prompt, signal) =>
        new Promise((resolve) => {
          shown += prompt
          signal.addEventListener('abort', () => resolve(undefined), { once: true })
        }),
      output,
      styleFor(output, {}),
    )
    const [first, second] = [new AbortController(), new AbortController()]
    const ask = (message: string, signal: AbortSignal) => port.elicit!({ questionId: 'q1', callId: 'c1', name: 'profile', turnId: 't', message, schema: EVERY_SHAPE, signal })
    const shownFirst = ask('First?', first.signal)
    const queued = ask('Second?', second.signal)
    while (!shown.includes('answer it?')) await new Promise((resolve) => setTimeout(resolve, 1))
    second.abort()
    first.abort()
    expect(await shownFirst).toEqual({ action: 'cancel' })
    expect(await queued).toEqual({ action: 'cancel' })
    expect(shown).toContain('profile asks: First?')
    expect(shown).toContain('no longer asked (answered elsewhere, or the call ended)')
    expect(shown).not.toContain('Second?')
  })
})

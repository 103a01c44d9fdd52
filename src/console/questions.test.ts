import { describe, expect, it } from 'vitest'
import { EVERY_SHAPE } from '../../test/question-shapes.js'
import type { QuestionAnswer, QuestionRequest } from '../seams/questions.js'
import { ConsoleQuestions, firstQuestionAnswer } from './questions.js'

function request(signal = new AbortController().signal): QuestionRequest {
  return { questionId: 'q1', callId: 'c1', name: 'profile', turnId: 't1', message: 'Your profile?', schema: EVERY_SHAPE, signal }
}

function watched(): ConsoleQuestions {
  const questions = new ConsoleQuestions()
  questions.watchedBy(() => true)
  return questions
}

describe('ConsoleQuestions', () => {
  it('refuses to ask while no page is open, so the tool hears cancel at once instead of waiting unseen', async () => {
    await expect(new ConsoleQuestions().elicit(request())).rejects.toThrow('no console page is open to ask')
  })

  it('keeps a question waiting until it is answered with content its schema takes, and fills the defaults', async () => {
    const questions = watched()
    const versions: number[] = []
    questions.onChange((queue) => versions.push(queue.version))
    const answer = questions.elicit(request())
    const [pending] = questions.pending()
    expect(pending).toMatchObject({ turnId: 't1', callId: 'c1', questionId: 'q1', name: 'profile', message: 'Your profile?', schema: EVERY_SHAPE })
    // Not what the schema asks: refused, and still waiting.
    expect(() => questions.answer(pending!.id, { action: 'accept', content: { name: 'Ada' } })).toThrow('the answer lacks "plan"; the question is still waiting')
    expect(() => questions.answer(pending!.id, { action: 'maybe' } as never)).toThrow('answer with action accept, decline or cancel')
    expect(questions.pending()).toHaveLength(1)
    expect(questions.answer(pending!.id, { action: 'accept', content: { name: 'Ada', plan: 'pro', age: 36, colors: ['g'] } })).toBe(true)
    await expect(answer).resolves.toEqual({ action: 'accept', content: { name: 'Ada', plan: 'pro', age: 36, ratio: 0.5, subscribe: true, tags: ['x'], colors: ['g'] } })
    expect(questions.pending()).toEqual([])
    expect(questions.answer(pending!.id, { action: 'decline' })).toBe(false)
    expect(versions).toEqual([1, 2])
  })

  it('withdraws a question whose call no longer wants the answer', async () => {
    const questions = watched()
    const abort = new AbortController()
    const answer = questions.elicit(request(abort.signal))
    expect(questions.pending()).toHaveLength(1)
    abort.abort()
    await expect(answer).resolves.toEqual({ action: 'cancel' })
    expect(questions.pending()).toEqual([])
  })
})

describe('firstQuestionAnswer', () => {
  it('asks every port at once, takes the first answer and withdraws the question from the others', async () => {
    const console = watched()
    let terminalSignal: AbortSignal | undefined
    let answerAtTerminal: (answer: QuestionAnswer) => void = () => {}
    const terminal = {
      elicit: (r: QuestionRequest) => {
        terminalSignal = r.signal
        return new Promise<QuestionAnswer>((resolve) => {
          answerAtTerminal = resolve
        })
      },
    }
    const port = firstQuestionAnswer([terminal, console])
    const answer = port.elicit!(request())
    await Promise.resolve()
    await Promise.resolve()
    expect(console.pending()).toHaveLength(1)
    answerAtTerminal({ action: 'decline' })
    await expect(answer).resolves.toEqual({ action: 'decline' })
    expect(console.pending()).toEqual([])

    // Now the console answers first: the terminal's prompt is withdrawn.
    const second = port.elicit!(request())
    await new Promise((resolve) => setTimeout(resolve, 0))
    console.answer(console.pending()[0]!.id, { action: 'cancel' })
    await expect(second).resolves.toEqual({ action: 'cancel' })
    expect(terminalSignal?.aborted).toBe(true)
  })

  it('passes over a port that cannot ask, and fails only when none can', async () => {
    const console = watched()
    const port = firstQuestionAnswer([new ConsoleQuestions(), console])
    const answer = port.elicit!(request())
    await new Promise((resolve) => setTimeout(resolve, 0))
    console.answer(console.pending()[0]!.id, { action: 'decline' })
    await expect(answer).resolves.toEqual({ action: 'decline' })
    const broken = { elicit: () => Promise.reject(new Error('terminal closed')) }
    await expect(firstQuestionAnswer([broken, new ConsoleQuestions()]).elicit!(request())).rejects.toThrow('terminal closed')
  })
})

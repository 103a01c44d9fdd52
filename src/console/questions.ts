import { randomUUID } from 'node:crypto'
import { SeamError } from '../errors.js'
import { checkContent } from '../features/question-schema.js'
import { redactText } from '../runtime/base/redact.js'
import type { QuestionAnswer, QuestionRequest } from '../seams/questions.js'
import type { QuestionPort } from '../seams/types.js'
import type { PendingQuestionView, QuestionQueueView, QuestionReply } from './types.js'
import { WaitingQueue } from './waiting.js'

const CANCEL: QuestionAnswer = Object.freeze({ action: 'cancel' })

/**
 * The console as a `QuestionPort`: each question a tool asks (`ctx.ask`) waits in a queue the page
 * shows as a form, until a person answers it there, or it is no longer wanted (the call aborted or
 * timed out, answered at the terminal): then it is withdrawn from the page. Questions live in this
 * process only, like `ConsoleApprovals`, and the port asks only while a page is open (`watchedBy`):
 * with nobody to see it, asking fails at once and the tool hears `cancel`.
 */
export class ConsoleQuestions implements QuestionPort {
  readonly #queue = new WaitingQueue<PendingQuestionView, QuestionAnswer>()

  /** Whether a page is open to show a question. */
  get available(): boolean {
    return this.#queue.available
  }

  /** Tells the queue how to know whether a page is open (the console's event stream has a client). */
  watchedBy(watched: () => boolean): void {
    this.#queue.watchedBy(watched)
  }

  elicit(request: QuestionRequest): Promise<QuestionAnswer> {
    if (!this.available) return Promise.reject(new Error('no console page is open to ask'))
    const view: PendingQuestionView = {
      id: randomUUID(),
      turnId: request.turnId,
      callId: request.callId,
      questionId: request.questionId,
      name: request.name,
      message: redactText(request.message),
      schema: request.schema,
      askedAt: Date.now(),
    }
    return this.#queue.wait(view, request.signal, CANCEL)
  }

  /** The questions waiting, oldest first. */
  pending(): PendingQuestionView[] {
    return this.#queue.pending()
  }

  /** The questions waiting, with the version of the queue they belong to. */
  queue(): QuestionQueueView {
    return this.#queue.queue()
  }

  /**
   * Answers question `id`; `false` when it is no longer waiting (answered elsewhere, or withdrawn).
   * A reply that is not `accept`, `decline` or `cancel`, or accepted content that does not match the
   * question's schema, throws `INVALID_CALL` and leaves it waiting: the runtime would decline it.
   */
  answer(id: string, reply: QuestionReply): boolean {
    const view = this.#queue.get(id)
    const action = (reply as { action?: unknown } | null)?.action
    if (action !== 'accept' && action !== 'decline' && action !== 'cancel') throw new SeamError('INVALID_CALL', 'answer with action accept, decline or cancel')
    if (view === undefined) return false
    if (action !== 'accept') return this.#queue.settle(id, { action })
    const checked = checkContent(view.schema, (reply as { content?: unknown }).content)
    if (!checked.ok) throw new SeamError('INVALID_CALL', `${checked.reason}; the question is still waiting`)
    return this.#queue.settle(id, { action: 'accept', content: checked.content })
  }

  /** Called with the whole queue on every change; returns a disposer. */
  onChange(listener: (queue: QuestionQueueView) => void): () => void {
    return this.#queue.onChange(listener)
  }
}

/** A question port that may say it has nobody to ask now (as `ConsoleQuestions` does without a page). */
export type AskablePort = QuestionPort & { readonly available?: boolean }

/**
 * One question port that asks every available port at once (a terminal and the console, say) and
 * takes the first answer; the others are withdrawn (each asks under its own signal, aborted as soon
 * as one answers). A port that throws is passed over; only when every one threw does this reject,
 * and the tool hears `cancel`.
 */
export function firstQuestionAnswer(ports: readonly AskablePort[]): QuestionPort {
  return {
    elicit(request) {
      const asked = ports.filter((port) => port.elicit !== undefined && port.available !== false)
      if (asked.length === 0) return Promise.reject(new Error('no question port is available'))
      const withdraw = new AbortController()
      const signal = AbortSignal.any([request.signal, withdraw.signal])
      return new Promise<QuestionAnswer>((resolve, reject) => {
        let passed = 0
        for (const port of asked) {
          Promise.resolve()
            .then(() => port.elicit!({ ...request, signal }))
            .then(
              (answer) => {
                if (withdraw.signal.aborted) return
                withdraw.abort(new Error('answered elsewhere'))
                resolve(answer)
              },
              (error: unknown) => {
                passed += 1
                if (passed === asked.length) reject(error)
              },
            )
        }
      })
    },
  }
}

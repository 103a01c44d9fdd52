import { randomUUID } from 'node:crypto'
import { SeamError } from '../errors.js'
import { type ApprovalAnswer, type ApprovalPort, type ApprovalRequest, offeredAnswers } from '../seams/approval.js'
import { redactSecrets } from '../runtime/base/privacy.js'
import { redactText } from '../runtime/base/redact.js'
import type { ApprovalQueueView, PendingApprovalView } from './types.js'

interface Pending {
  readonly view: PendingApprovalView
  readonly settle: (answer: ApprovalAnswer) => void
}

/**
 * The console as an `ApprovalPort`: each question waits in a queue the page shows at once, until a
 * person answers it there, or the call no longer needs it (aborted, timed out, answered at the
 * terminal): then it is withdrawn from the page. Questions live in this process only.
 *
 * The port is available only while a console page is open (`watchedBy`): with nobody to see the
 * question, asking fails at once and the pipeline fails closed, instead of a call waiting unseen.
 */
export class ConsoleApprovals implements ApprovalPort {
  readonly #pending = new Map<string, Pending>()
  readonly #listeners = new Set<(queue: ApprovalQueueView) => void>()
  #watched: () => boolean = () => false
  #version = 0

  get available(): boolean {
    return this.#watched()
  }

  /** Tells the queue how to know whether a page is open (the console's event stream has a client). */
  watchedBy(watched: () => boolean): void {
    this.#watched = watched
  }

  request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    if (!this.available) return Promise.reject(new Error('no console page is open to ask'))
    if (request.signal.aborted) return Promise.resolve('rejected')
    const id = randomUUID()
    return new Promise<ApprovalAnswer>((resolve) => {
      const withdraw = () => this.#settle(id, 'rejected')
      const settle = (answer: ApprovalAnswer) => {
        request.signal.removeEventListener('abort', withdraw)
        resolve(answer)
      }
      const view: PendingApprovalView = {
        id,
        callId: request.callId,
        name: request.name,
        // A page shows what the journal keeps: values under secret-looking keys and secrets by shape redacted.
        summary: redactText(request.summary),
        reason: redactText(request.reason),
        session: request.session,
        arguments: redactSecrets(request.arguments) as PendingApprovalView['arguments'],
        answers: offeredAnswers(request.answers),
        askedAt: Date.now(),
      }
      this.#pending.set(id, { view, settle })
      request.signal.addEventListener('abort', withdraw, { once: true })
      this.#changed()
    })
  }

  /** The questions waiting, oldest first. */
  pending(): PendingApprovalView[] {
    return [...this.#pending.values()].map((entry) => entry.view)
  }

  /** The questions waiting, with the version of the queue they belong to. */
  queue(): ApprovalQueueView {
    return { version: this.#version, pending: this.pending() }
  }

  /**
   * Answers question `id`; `false` when it is no longer waiting (answered elsewhere, or withdrawn).
   * An answer the question did not offer throws `INVALID_CALL` and leaves it waiting: the runtime
   * would record it as the allow it offered, not what the person chose.
   */
  decide(id: string, answer: ApprovalAnswer): boolean {
    const view = this.#pending.get(id)?.view
    if (view !== undefined && !view.answers.includes(answer)) {
      throw new SeamError('INVALID_CALL', `${view.name} offers ${view.answers.join(' or ')}, not ${answer}`)
    }
    return this.#settle(id, answer)
  }

  /** Called with the whole queue on every change; returns a disposer. */
  onChange(listener: (queue: ApprovalQueueView) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #settle(id: string, answer: ApprovalAnswer): boolean {
    const entry = this.#pending.get(id)
    if (entry === undefined) return false
    this.#pending.delete(id)
    entry.settle(answer)
    this.#changed()
    return true
  }

  #changed(): void {
    this.#version++
    const queue = this.queue()
    for (const listener of this.#listeners) {
      try {
        listener(queue)
      } catch {
        // A listener (an event stream that went away) cannot break a question.
      }
    }
  }
}

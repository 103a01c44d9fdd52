import { randomUUID } from 'node:crypto'
import { SeamError } from '../errors.js'
import { type ApprovalAnswer, type ApprovalPort, type ApprovalRequest, offeredAnswers } from '../seams/approval.js'
import { redactSecrets } from '../runtime/base/privacy.js'
import { redactText } from '../runtime/base/redact.js'
import type { ApprovalQueueView, PendingApprovalView } from './types.js'
import { WaitingQueue } from './waiting.js'

/**
 * The console as an `ApprovalPort`: each question waits in a queue the page shows at once, until a
 * person answers it there, or the call no longer needs it (aborted, timed out, answered at the
 * terminal): then it is withdrawn from the page. Questions live in this process only.
 *
 * The port is available only while a console page is open (`watchedBy`): with nobody to see the
 * question, asking fails at once and the pipeline fails closed, instead of a call waiting unseen.
 */
export class ConsoleApprovals implements ApprovalPort {
  readonly #queue = new WaitingQueue<PendingApprovalView, ApprovalAnswer>()

  get available(): boolean {
    return this.#queue.available
  }

  /** Tells the queue how to know whether a page is open (the console's event stream has a client). */
  watchedBy(watched: () => boolean): void {
    this.#queue.watchedBy(watched)
  }

  request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    if (!this.available) return Promise.reject(new Error('no console page is open to ask'))
    const view: PendingApprovalView = {
      id: randomUUID(),
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
    return this.#queue.wait(view, request.signal, 'rejected')
  }

  /** The questions waiting, oldest first. */
  pending(): PendingApprovalView[] {
    return this.#queue.pending()
  }

  /** The questions waiting, with the version of the queue they belong to. */
  queue(): ApprovalQueueView {
    return this.#queue.queue()
  }

  /**
   * Answers question `id`; `false` when it is no longer waiting (answered elsewhere, or withdrawn).
   * An answer the question did not offer throws `INVALID_CALL` and leaves it waiting: the runtime
   * would record it as the allow it offered, not what the person chose.
   */
  decide(id: string, answer: ApprovalAnswer): boolean {
    const view = this.#queue.get(id)
    if (view !== undefined && !view.answers.includes(answer)) {
      throw new SeamError('INVALID_CALL', `${view.name} offers ${view.answers.join(' or ')}, not ${answer}`)
    }
    return this.#queue.settle(id, answer)
  }

  /** Called with the whole queue on every change; returns a disposer. */
  onChange(listener: (queue: ApprovalQueueView) => void): () => void {
    return this.#queue.onChange(listener)
  }
}

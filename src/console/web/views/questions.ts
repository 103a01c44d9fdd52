import type { PendingQuestionView, QuestionQueueView } from '../../types.js'
import { api, newestQueue } from '../client.js'
import { h, replace, time } from '../dom.js'
import { questionForm } from '../question-form.js'
import type { View, ViewContext } from './view.js'

/** The waiting questions as cards, kept in place across changes so a half-filled form survives another question arriving. */
export interface QuestionList {
  readonly element: HTMLElement
  /** Draws a queue snapshot (older snapshots than the last drawn are ignored). */
  show(queue: QuestionQueueView): void
  refresh(): Promise<void>
}

/**
 * The questions running tools ask (`ctx.ask`) and wait on, oldest first, each a form drawn from its
 * schema. A question answered elsewhere (the terminal, the MCP client) or withdrawn leaves the list.
 * `only` narrows it (the run form shows its own tool's questions).
 */
export function questionList(context: ViewContext, empty: string, only?: (question: PendingQuestionView) => boolean): QuestionList {
  const list = h('ol', { class: 'approvals questions', 'aria-label': 'questions waiting now, oldest first' })
  const cards = new Map<string, HTMLElement>()
  const newest = newestQueue<QuestionQueueView>()
  const show = (queue: QuestionQueueView) => {
    if (!newest(queue)) return
    const pending = queue.pending.filter((q) => only?.(q) ?? true)
    const ids = new Set(pending.map((q) => q.id))
    for (const [id, card] of cards) {
      if (ids.has(id)) continue
      card.remove()
      cards.delete(id)
    }
    for (const question of pending) if (!cards.has(question.id)) cards.set(question.id, card(question))
    if (pending.length === 0) replace(list, h('li', { class: 'muted empty' }, empty))
    else {
      list.querySelector('li.empty')?.remove()
      // Oldest first: appending in queue order moves nothing that is already in place.
      for (const question of pending) list.append(cards.get(question.id)!)
    }
  }

  function card(question: PendingQuestionView): HTMLElement {
    return h(
      'li',
      { class: 'card', 'data-id': question.id, 'aria-label': `${question.name} asks: ${question.message}` },
      h('h3', null, h('code', null, question.name), ' asks'),
      h(
        'p',
        { class: 'muted' },
        `asked ${time(question.askedAt)} · call ${question.callId} · `,
        h('a', { href: `#/journal/${encodeURIComponent(question.turnId)}` }, 'its turn'),
      ),
      h('p', { class: 'summary' }, question.message),
      questionForm(question, async (reply) => {
        await api.answerQuestion(question.id, reply)
        context.announce(`${question.name}: ${reply.action}`)
      }),
    )
  }

  const refresh = () => api.questions().then(show, () => {})
  return { element: list, show, refresh }
}

/** The Questions section: every question waiting in this process. */
export function questionsView(context: ViewContext): View {
  const questions = questionList(context, 'No tool is asking anything.')
  const element = h(
    'div',
    null,
    h('h1', null, 'Questions'),
    h('p', { class: 'muted' }, 'Questions running tools ask (ctx.ask). The first answer wins: one given at the terminal of seam dev takes the question off this page.'),
    questions.element,
  )
  void questions.refresh()
  return {
    element,
    refresh: () => void questions.refresh(),
    onEvent(event) {
      if (event.type === 'questions') questions.show(event)
    },
  }
}

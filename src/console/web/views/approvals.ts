import type { ApprovalChoice, ApprovalQueueView, ParkedApprovalView, PendingApprovalView } from '../../types.js'
import { api, latestOnly, newestQueue } from '../client.js'
import { badge, h, replace, time } from '../dom.js'
import { grantsSection } from './grants.js'
import type { View, ViewContext } from './view.js'

const CHOICES: readonly { answer: ApprovalChoice; label: string; key: string }[] = [
  { answer: 'allowed-once', label: 'Allow once', key: 'o' },
  { answer: 'allowed-session', label: 'Allow for the session', key: 's' },
  { answer: 'rejected', label: 'Reject', key: 'r' },
]
const offered = (question: Question) => CHOICES.filter((c) => question.answers.includes(c.answer))

/** One question, whichever queue it waits in. */
interface Question {
  readonly id: string
  readonly tool: string
  readonly summary: string
  readonly reason: string
  readonly arguments: unknown
  readonly meta: string
  /** The answers it offers: only these are drawn and keyed. */
  readonly answers: readonly ApprovalChoice[]
  readonly decided?: string
  answer(choice: ApprovalChoice): Promise<unknown>
}

/**
 * The questions waiting for a person: those a running call asks now (this process), then calls
 * parked in the journal (any process, across restarts). Keyboard: ↑/↓ (or j/k) move between
 * questions, o allows once, s allows for the session, r rejects; each answer is also a labelled button.
 * A question shows, and takes from the keyboard, only the answers its call offers.
 */
export function approvalsView(context: ViewContext): View {
  const live = h('ol', { class: 'approvals', 'aria-label': 'calls waiting now, oldest first' })
  const parked = h('ol', { class: 'approvals', 'aria-label': 'parked calls, oldest first' })
  const grants = grantsSection((text) => context.announce(text))
  const element = h(
    'div',
    null,
    h('h1', null, 'Approvals'),
    h('p', { class: 'muted', id: 'approval-keys' }, 'Keys: ↑ ↓ move · o allow once · s allow for the session · r reject (where offered)'),
    h('h2', null, 'Waiting now'),
    live,
    h('h2', null, 'Parked in the journal'),
    h('p', { class: 'muted' }, 'Calls parked for a later decision; an allowed call runs when its host resumes it.'),
    parked,
    grants.element,
  )
  let focused: string | undefined

  const render = (list: HTMLElement, questions: Question[], empty: string) => {
    replace(list, questions.length === 0 ? h('li', { class: 'muted empty' }, empty) : questions.map(item))
    const items = [...element.querySelectorAll<HTMLElement>('li[data-id]')]
    const target = items.find((li) => li.dataset.id === focused) ?? items[0]
    if (target && (document.activeElement === document.body || element.contains(document.activeElement))) target.focus()
  }
  const newest = newestQueue()
  const renderLive = (queue: ApprovalQueueView) => {
    if (newest(queue)) render(live, queue.pending.map(liveQuestion), 'Nothing is waiting for approval.')
  }
  const renderParked = (calls: ParkedApprovalView[]) => render(parked, calls.map(parkedQuestion), 'No parked calls.')
  const fetchParked = latestOnly(api.parked)

  function liveQuestion(p: PendingApprovalView): Question {
    return {
      id: p.id,
      tool: p.name,
      summary: p.summary,
      reason: p.reason,
      arguments: p.arguments,
      meta: `asked ${time(p.askedAt)} · session ${p.session}`,
      answers: p.answers,
      answer: (c) => api.decide(p.id, c),
    }
  }

  function parkedQuestion(p: ParkedApprovalView): Question {
    return {
      id: `${p.turnId}/${p.callId}`,
      tool: p.tool,
      summary: p.summary,
      reason: p.reason,
      arguments: p.arguments,
      meta: `parked ${time(p.askedAt)} by ${p.host} · session ${p.session} · principal ${p.principal}`,
      answers: p.answers,
      ...(p.decision ? { decided: `${p.decision.answer} by ${p.decision.by}, waiting to be resumed` } : {}),
      answer: (c) => api.decideParked(p.turnId, p.callId, c),
    }
  }

  function item(question: Question): HTMLElement {
    return h(
      'li',
      {
        tabindex: 0,
        'data-id': question.id,
        class: 'card',
        'aria-describedby': 'approval-keys',
        'aria-label': `${question.tool}: ${question.summary}`,
        onfocus: () => {
          focused = question.id
        },
        onkeydown: (e: Event) => key(e as KeyboardEvent, question),
      },
      h('h3', null, h('code', null, question.tool)),
      h('p', { class: 'muted' }, question.meta),
      h('p', { class: 'summary' }, question.summary),
      h('p', null, h('strong', null, 'Why: '), question.reason),
      h('pre', { class: 'json', 'aria-label': 'arguments' }, JSON.stringify(question.arguments, null, 2)),
      question.decided
        ? h('p', null, badge('decided', 'ok'), ` ${question.decided}`)
        : h(
            'div',
            { class: 'actions' },
            offered(question).map((c) => h('button', { type: 'button', class: c.answer, onclick: () => void answer(question, c.answer) }, c.label)),
          ),
    )
  }

  function key(event: KeyboardEvent, question: Question): void {
    if (event.target !== event.currentTarget) return
    const items = [...element.querySelectorAll<HTMLElement>('li[data-id]')]
    const index = items.findIndex((li) => li.dataset.id === question.id)
    const move = (to: number) => items[Math.max(0, Math.min(items.length - 1, to))]?.focus()
    if (event.key === 'ArrowDown' || event.key === 'j') move(index + 1)
    else if (event.key === 'ArrowUp' || event.key === 'k') move(index - 1)
    else {
      const choice = offered(question).find((c) => c.key === event.key.toLowerCase())
      if (!choice || question.decided) return
      void answer(question, choice.answer)
    }
    event.preventDefault()
  }

  async function answer(question: Question, choice: ApprovalChoice): Promise<void> {
    try {
      await question.answer(choice)
      context.announce(`${question.tool}: ${choice}`)
    } catch (error) {
      context.announce((error as Error).message)
    }
    await refresh()
  }

  const refresh = () => Promise.all([api.approvals().then(renderLive), fetchParked(renderParked), grants.refresh()]).catch(() => {})
  void refresh()
  return {
    element,
    refresh: () => void refresh(),
    onEvent(event) {
      if (event.type === 'approvals') renderLive(event)
      // Parking and deciding are journaled: the journal's stream says when to look again.
      // A grant is given as its call runs, which the journal says too.
      if (event.type === 'journal') {
        fetchParked(renderParked).catch(() => {})
        void grants.refresh()
      }
    },
  }
}

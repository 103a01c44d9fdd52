import type { ApprovalChoice, PendingApprovalView } from '../../types.js'
import { api } from '../client.js'
import { h, replace, time } from '../dom.js'
import type { View, ViewContext } from './view.js'

const CHOICES: readonly { answer: ApprovalChoice; label: string; key: string }[] = [
  { answer: 'allowed-once', label: 'Allow once', key: 'o' },
  { answer: 'allowed-session', label: 'Allow for the session', key: 's' },
  { answer: 'rejected', label: 'Reject', key: 'r' },
]

/**
 * The questions waiting for a person, oldest first. Keyboard: ↑/↓ (or j/k) move between questions,
 * o allows once, s allows for the session, r rejects; every answer is also a labelled button.
 */
export function approvalsView(context: ViewContext): View {
  const list = h('ol', { class: 'approvals', 'aria-label': 'pending approvals, oldest first' })
  const element = h(
    'div',
    null,
    h('h1', null, 'Approvals'),
    h('p', { class: 'muted', id: 'approval-keys' }, 'Keys: ↑ ↓ move · o allow once · s allow for the session · r reject'),
    list,
  )
  let focused: string | undefined

  const render = (pending: PendingApprovalView[]) => {
    replace(list, pending.length === 0 ? h('li', { class: 'muted empty' }, 'Nothing is waiting for approval.') : pending.map(item))
    const target = [...list.querySelectorAll<HTMLElement>('li[data-id]')].find((li) => li.dataset.id === focused) ?? list.querySelector<HTMLElement>('li[data-id]')
    if (target && (document.activeElement === document.body || list.contains(document.activeElement))) target.focus()
  }

  function item(pending: PendingApprovalView): HTMLElement {
    const li = h(
      'li',
      { tabindex: 0, 'data-id': pending.id, class: 'card', 'aria-describedby': 'approval-keys', 'aria-label': `${pending.name}: ${pending.summary}`, onfocus: () => (focused = pending.id), onkeydown: (e: Event) => key(e as KeyboardEvent, pending) },
      h('h2', null, h('code', null, pending.name)),
      h('p', { class: 'muted' }, `asked ${time(pending.askedAt)} · session ${pending.session}`),
      h('p', { class: 'summary' }, pending.summary),
      h('p', null, h('strong', null, 'Why: '), pending.reason),
      h('pre', { class: 'json', 'aria-label': 'arguments' }, JSON.stringify(pending.arguments, null, 2)),
      h('div', { class: 'actions' }, CHOICES.map((c) => h('button', { type: 'button', class: c.answer, onclick: () => void answer(pending, c.answer) }, c.label))),
    )
    return li
  }

  function key(event: KeyboardEvent, pending: PendingApprovalView): void {
    if (event.target !== event.currentTarget) return
    const items = [...list.querySelectorAll<HTMLElement>('li[data-id]')]
    const index = items.findIndex((li) => li.dataset.id === pending.id)
    const move = (to: number) => items[Math.max(0, Math.min(items.length - 1, to))]?.focus()
    if (event.key === 'ArrowDown' || event.key === 'j') move(index + 1)
    else if (event.key === 'ArrowUp' || event.key === 'k') move(index - 1)
    else {
      const choice = CHOICES.find((c) => c.key === event.key.toLowerCase())
      if (!choice) return
      void answer(pending, choice.answer)
    }
    event.preventDefault()
  }

  async function answer(pending: PendingApprovalView, choice: ApprovalChoice): Promise<void> {
    try {
      await api.decide(pending.id, choice)
      context.announce(`${pending.name}: ${choice}`)
    } catch (error) {
      context.announce((error as Error).message)
    }
    render(await api.approvals())
  }

  void api.approvals().then(render)
  return {
    element,
    onEvent(event) {
      if (event.type === 'approvals') render(event.pending)
    },
  }
}

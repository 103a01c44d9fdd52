import type { LiveEvent, QuestionQueueView, SignInQueueView } from '../types.js'
import { api, newestQueue } from './client.js'
import { h, replace } from './dom.js'
import { approvalsView } from './views/approvals.js'
import { catalogView } from './views/catalog.js'
import { generationsView } from './views/generations.js'
import { journalView } from './views/journal.js'
import { questionsView } from './views/questions.js'
import { signInsView } from './views/sign-ins.js'
import { tryView } from './views/try.js'
import type { View, ViewContext } from './views/view.js'

/** The routes: `#/<section>/<argument>`; each builds its view afresh. */
const ROUTES: Record<string, { label: string; view: (context: ViewContext, argument: string | undefined) => View }> = {
  generations: { label: 'Generations', view: (c) => generationsView(c) },
  catalog: { label: 'Catalog', view: (c, a) => catalogView(c, a === undefined ? undefined : Number(a)) },
  journal: { label: 'Journal', view: (c, a) => journalView(c, a) },
  approvals: { label: 'Approvals', view: (c) => approvalsView(c) },
  questions: { label: 'Questions', view: (c) => questionsView(c) },
  'sign-ins': { label: 'Sign-ins', view: (c) => signInsView(c) },
  try: { label: 'Try a tool', view: (c, a) => tryView(c, a) },
}

const main = document.getElementById('main')!
const nav = document.getElementById('nav')!
const live = document.getElementById('announce')!
const pendingCount = h('span', { class: 'count', 'aria-label': 'pending' })
const questionCount = h('span', { class: 'count', 'aria-label': 'waiting' })
const signInCount = h('span', { class: 'count', 'aria-label': 'waiting' })
let current: View | undefined

const context: ViewContext = {
  navigate(hash) {
    if (location.hash === hash) route()
    else location.hash = hash
  },
  announce(text) {
    live.textContent = text
  },
}

function route(): void {
  const [, section = 'generations', argument] = /^#\/([^/]*)\/?(.*)$/.exec(location.hash) ?? []
  const entry = ROUTES[section] ?? ROUTES.generations!
  current = entry.view(context, argument ? decodeURIComponent(argument) : undefined)
  replace(main, current.element)
  for (const link of nav.querySelectorAll('a')) {
    if (link.dataset.section === (ROUTES[section] ? section : 'generations')) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  }
  document.title = `${entry.label} · seam console`
}

function setPending(count: number): void {
  pendingCount.textContent = count > 0 ? String(count) : ''
}

function setQuestions(count: number): void {
  questionCount.textContent = count > 0 ? String(count) : ''
}

function setSignIns(count: number): void {
  signInCount.textContent = count > 0 ? String(count) : ''
}

const COUNTS: Record<string, HTMLElement> = { approvals: pendingCount, questions: questionCount, 'sign-ins': signInCount }

replace(
  nav,
  h(
    'ul',
    null,
    Object.entries(ROUTES).map(([section, { label }]) =>
      h('li', null, h('a', { href: `#/${section}`, 'data-section': section }, label, COUNTS[section] ? [' ', COUNTS[section]] : null)),
    ),
  ),
)
window.addEventListener('hashchange', route)
route()
const newestCount = newestQueue()
const newestQuestions = newestQueue<QuestionQueueView>()
const newestSignIns = newestQueue<SignInQueueView>()
const countPending = () => {
  api.approvals().then((queue) => newestCount(queue) && setPending(queue.pending.length), () => {})
  api.questions().then((queue) => newestQuestions(queue) && setQuestions(queue.pending.length), () => {})
  api.signIns().then((queue) => newestSignIns(queue) && setSignIns(queue.pending.length), () => {})
}
countPending()
api.events(
  (event: LiveEvent) => {
    if (event.type === 'approvals' && newestCount(event)) {
      setPending(event.pending.length)
      if (event.pending.length > 0) context.announce(`${event.pending.length} approval(s) waiting`)
    }
    if (event.type === 'questions' && newestQuestions(event)) {
      setQuestions(event.pending.length)
      if (event.pending.length > 0) context.announce(`${event.pending.length} question(s) waiting`)
    }
    if (event.type === 'sign-ins' && newestSignIns(event)) {
      setSignIns(event.pending.length)
      if (event.pending.length > 0) context.announce(`${event.pending.length} sign-in(s) waiting`)
    }
    current?.onEvent?.(event)
  },
  // The view loaded as it was built, maybe before the stream knew where the journal was.
  () => {
    countPending()
    current?.refresh?.()
  },
)

import type { CallView, ProgressView, QuestionView, TurnDetail, TurnSummary } from '../../types.js'
import { api, type TurnFilters } from '../client.js'
import { contentView } from '../content.js'
import { badge, type Child, h, ms, replace, time, toneOf } from '../dom.js'
import type { View, ViewContext } from './view.js'
import { type Waterfall, waterfall } from './waterfall.js'

const FILTERS = ['session', 'tool', 'code', 'host'] as const
const COLUMNS = ['begun', 'turn', 'session', 'principal', 'generation', 'host', 'tools', 'calls', 'outcome'] as const
const STATUSES = ['completed', 'failed', 'denied', 'cancelled'] as const

/** Turns newest first (paged by the store), filters, a live tail, and one turn's calls in model order. */
export function journalView(_context: ViewContext, openTurn: string | undefined): View {
  let filters: TurnFilters = {}
  let next: string | undefined
  let open = openTurn
  const rows = h('tbody')
  const more = h('button', { type: 'button', hidden: true, onclick: () => void load(true) }, 'Older turns')
  const detail = h('section', { class: 'detail', 'aria-live': 'polite', 'aria-label': 'turn detail' })
  const status = h(
    'select',
    { id: 'f-status', name: 'status' },
    ['', 'completed', 'denied', 'failed', 'cancelled'].map((s) => h('option', { value: s }, s || 'any')),
  )
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'filter turns',
      onsubmit: (e: Event) => {
        e.preventDefault()
        const data = new FormData(form)
        filters = Object.fromEntries([...FILTERS, 'status'].map((name) => [name, String(data.get(name) ?? '').trim()]))
        void load(false)
      },
    },
    FILTERS.map((name) => h('label', { for: `f-${name}` }, name, h('input', { id: `f-${name}`, name, type: 'text', autocomplete: 'off' }))),
    h('label', { for: 'f-status' }, 'status', status),
    h('button', { type: 'submit' }, 'Filter'),
  )
  const table = h(
    'table',
    { class: 'turns' },
    h('caption', null, 'Turns, newest first (live)'),
    h(
      'thead',
      null,
      h('tr', null, COLUMNS.map((c) => h('th', { scope: 'col' }, c))),
    ),
    rows,
  )
  // A narrow window (or 200 % zoom) scrolls the table sideways instead of cutting its last columns.
  const scroller = h('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'turns' }, table)
  const element = h('div', null, h('h1', null, 'Journal'), form, scroller, more, detail)

  // Loads overlap (the stream names turns faster than a page answers): only the latest is drawn.
  let loads = 0
  async function load(older: boolean): Promise<void> {
    const ticket = ++loads
    try {
      const page = await api.turns({ ...filters, ...(older && next ? { before: next } : {}) })
      if (ticket !== loads) return
      if (!older) replace(rows)
      rows.append(...page.turns.map(turnRow))
      if (!older && page.turns.length === 0) rows.append(h('tr', null, h('td', { colspan: COLUMNS.length, class: 'muted' }, 'no turns match')))
      next = page.next
      more.hidden = next === undefined
    } catch (error) {
      if (ticket === loads) replace(rows, h('tr', null, h('td', { colspan: COLUMNS.length, class: 'error' }, (error as Error).message)))
    }
  }

  function turnRow(turn: TurnSummary): HTMLElement {
    return h(
      'tr',
      { class: turn.endReason === 'interrupted' ? 'interrupted' : '', 'data-turn': turn.turnId },
      h('td', null, time(turn.begunAt)),
      h('td', null, h('button', { type: 'button', class: 'link', 'aria-label': `show turn ${turn.turnId}`, onclick: () => show(turn.turnId) }, turn.turnId.slice(0, 8))),
      h('td', null, turn.session),
      h('td', null, turn.subjectId),
      h('td', null, String(turn.generation)),
      h('td', null, turn.host ?? ''),
      h('td', { class: 'tools' }, turn.tools.length === 0 ? h('span', { class: 'muted' }, 'none') : turn.tools.map((name, i) => [i > 0 ? ', ' : '', h('code', null, name)])),
      h('td', null, String(turn.calls)),
      h('td', { class: 'outcome' }, outcomeBadges(turn)),
    )
  }

  function show(turnId: string): void {
    open = turnId
    // The address names the turn (a link to share) without rebuilding the list and its filters.
    history.replaceState(null, '', `#/journal/${encodeURIComponent(turnId)}`)
    void loadDetail().then(() => detail.querySelector('h2')?.focus())
  }

  let details = 0
  async function loadDetail(): Promise<void> {
    const ticket = ++details
    if (open === undefined) return replace(detail)
    try {
      const turn = await api.turn(open)
      if (ticket === details) renderDetail(turn)
    } catch (error) {
      if (ticket === details) replace(detail, h('p', { class: 'error' }, (error as Error).message))
    }
  }

  let bars: Waterfall | undefined

  function pick(callId: string): void {
    const item = detail.querySelector<HTMLElement>(`li.call[data-call="${CSS.escape(callId)}"]`)
    item?.scrollIntoView({ block: 'start' })
    item?.focus()
  }

  function renderDetail(turn: TurnDetail): void {
    bars?.stop()
    bars = turn.calls.length === 0 ? undefined : waterfall(turn, pick)
    // Opened by a short id (as the list shows it): the address names the whole one from now on.
    if (open !== turn.turnId) {
      open = turn.turnId
      history.replaceState(null, '', `#/journal/${encodeURIComponent(turn.turnId)}`)
    }
    replace(
      detail,
      h('h2', { tabindex: -1 }, 'Turn ', h('code', null, turn.turnId)),
      turn.host ? h('p', { class: 'muted' }, `host ${turn.host}`) : null,
      bars?.element,
      turn.calls.length === 0 ? h('p', { class: 'muted' }, 'no calls') : h('ol', { class: 'calls' }, turn.calls.map(callView)),
    )
  }

  void load(false)
  void loadDetail()
  return {
    element,
    onEvent(event) {
      if (event.type === 'progress') {
        // The open turn's running call: its bar moves in place (a reload would lose focus and scroll).
        if (event.progress.turnId !== open) return
        bars?.progress(event.progress.callId, event.progress)
        const call = detail.querySelector(`li.call[data-call="${CSS.escape(event.progress.callId)}"]`)
        if (call === null || call.classList.contains('settled')) return
        const bar = progressBar(event.progress)
        const old = call.querySelector('.progress')
        if (old) old.replaceWith(bar)
        else call.querySelector('p')?.after(bar)
        return
      }
      if (event.type !== 'journal') return
      // The live tail: the first page follows the journal; an older page stays where it is.
      if (next === undefined || rows.childElementCount <= 50) void load(false)
      if (open !== undefined && event.turns.includes(open)) void loadDetail()
    },
    refresh() {
      if (next === undefined || rows.childElementCount <= 50) void load(false)
      void loadDetail()
    },
  }
}

/** A turn's results by status, its calls still open, and how it ended unless it simply ended. */
function outcomeBadges(turn: TurnSummary): Child[] {
  const badges: HTMLElement[] = []
  let settled = 0
  for (const status of STATUSES) {
    const n = turn.outcomes[status] ?? 0
    settled += n
    if (n > 0) badges.push(badge(`${n} ${status}`, toneOf(status)))
  }
  if (turn.calls > settled) badges.push(badge(`${turn.calls - settled} open`, 'info'))
  if (turn.endReason === 'interrupted') badges.push(badge('interrupted', 'bad'))
  else if (turn.endReason === undefined) badges.push(badge('turn running', 'info'))
  return badges.flatMap((b, i) => (i > 0 ? [' ', b] : [b]))
}

/** A running call's progress: a bar of `done` of `total` (indeterminate without one), and its line. */
function progressBar(progress: ProgressView): HTMLElement {
  const { done, total, message } = progress
  const known = total !== undefined && total > 0
  const percent = known ? Math.min(100, Math.round((done / total) * 100)) : undefined
  const label = `${known ? `${done} of ${total} (${percent} %)` : `${done} done`}${message ? ` · ${message}` : ''}`
  return h(
    'div',
    { class: 'progress', role: 'group', 'aria-label': 'progress' },
    h('progress', { ...(known ? { value: Math.min(done, total), max: total } : {}), 'aria-label': label }),
    h('span', { class: 'muted' }, label),
  )
}

function callView(call: CallView): HTMLElement {
  const result = call.result
  const unknown = result?.code === 'OUTCOME_UNKNOWN'
  return h(
    'li',
    { class: `call${unknown ? ' unknown' : ''}${result ? ' settled' : ''}`, 'data-call': call.callId, tabindex: -1 },
    h(
      'p',
      null,
      h('code', { class: 'tool' }, call.name),
      ' ',
      result ? badge(result.status, toneOf(result.status)) : badge('no result yet', 'info'),
      result?.code ? [' ', badge(result.code, unknown ? 'bad' : 'warn')] : null,
      result?.policy ? h('span', { class: 'muted' }, ` (${result.policy})`) : null,
      h('span', { class: 'muted' }, ` ${time(call.at)} · ${result ? ms(result.durationMs) : '…'} · generation ${call.generation} · ${call.callId}`),
    ),
    !result && call.progress ? progressBar(call.progress) : null,
    argumentsView(call),
    call.approval
      ? h('p', { class: 'approval' }, 'approval asked: ', call.approval.reason, ' → ', call.approval.decision ? badge(call.approval.decision, call.approval.decision.startsWith('allowed') ? 'ok' : 'warn') : badge('waiting', 'info'))
      : null,
    call.questions?.length ? questionsOf(call.questions) : null,
    result ? contentView(result.content) : null,
    call.calls?.length ? h('details', { open: true, class: 'subcalls' }, h('summary', null, `${call.calls.length} nested call${call.calls.length === 1 ? '' : 's'}`), h('ol', { class: 'calls' }, call.calls.map(callView))) : null,
  )
}

/** What a call asked (`ctx.ask`) and the answer each question got, or that it still waits. */
function questionsOf(questions: readonly QuestionView[]): HTMLElement {
  return h(
    'ul',
    { class: 'asked', 'aria-label': 'questions asked' },
    questions.map((q) =>
      h(
        'li',
        null,
        'question: ',
        q.message,
        ' → ',
        q.action ? badge(q.action, q.action === 'accept' ? 'ok' : 'warn') : [badge('waiting', 'info'), ' ', h('a', { href: '#/questions' }, 'answer it')],
        q.content ? [' ', h('code', null, q.content)] : null,
        q.reason ? h('span', { class: 'muted' }, ` (${q.reason})`) : null,
      ),
    ),
  )
}

/** A call's arguments; a Code Mode run's program shown as its source. */
function argumentsView(call: CallView): HTMLElement {
  const source = call.name === 'run_code' ? codeOf(call.arguments) : undefined
  if (source !== undefined) return h('details', { open: true }, h('summary', null, 'program'), h('pre', { class: 'code' }, source))
  return h('details', { open: true }, h('summary', null, 'arguments'), h('pre', { class: 'json' }, pretty(call.arguments)))
}

function codeOf(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { code?: unknown } | null)?.code
    return typeof code === 'string' ? code : undefined
  } catch {
    return undefined
  }
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

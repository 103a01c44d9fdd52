import type { DiagnosticView, DiffView, StateView, TimelineEntry } from '../../types.js'
import { api } from '../client.js'
import { badge, h, ms, replace, time } from '../dom.js'
import type { View, ViewContext } from './view.js'

/** The timeline of generations and failed reloads, newest first, with the providers of the live one. */
export function generationsView(context: ViewContext): View {
  const problems = h('section', { 'aria-labelledby': 'problems-title', class: 'problems', hidden: true })
  const providers = h('section', { 'aria-labelledby': 'providers-title' })
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'generations, newest first' })
  const element = h(
    'div',
    null,
    h('h1', null, 'Generations'),
    problems,
    providers,
    h('section', { 'aria-labelledby': 'timeline-title' }, h('h2', { id: 'timeline-title' }, 'Timeline'), timeline),
  )
  const render = (state: StateView) => {
    const open = state.timeline.filter((entry) => entry.kind === 'failed' && !entry.resolved)
    problems.hidden = open.length === 0
    replace(
      problems,
      h('h2', { id: 'problems-title' }, 'Reload failed: the previous generation keeps serving'),
      open.slice(-1).map((entry) => entry.kind === 'failed' && diagnosticsView(entry.diagnostics, entry.message)),
    )
    replace(
      providers,
      h('h2', { id: 'providers-title' }, 'Providers'),
      state.providers.length === 0
        ? h('p', { class: 'muted' }, 'no mounted providers')
        : h(
            'ul',
            { class: 'plain' },
            state.providers.map((p) =>
              h(
                'li',
                null,
                badge(p.state, p.state === 'connected' ? 'ok' : p.state === 'down' ? 'bad' : 'muted'),
                ' ',
                h('code', null, p.provider),
                ` ${p.tools} tools`,
                p.reason ? h('span', { class: p.state === 'down' ? 'error' : 'muted' }, ` ${p.reason}`) : null,
                p.retryAt ? h('span', { class: 'muted' }, ` (retrying at ${time(p.retryAt)})`) : null,
              ),
            ),
          ),
    )
    replace(timeline, [...state.timeline].reverse().map((entry) => entryView(entry, state.generation, open.at(-1))))
  }
  const refresh = () => api.state().then(render, (error: Error) => replace(timeline, h('li', { class: 'error' }, error.message)))
  void refresh()
  return {
    element,
    onEvent(event) {
      if (event.type === 'provider') return void refresh()
      if (event.type !== 'generation') return
      void refresh()
      context.announce(event.entry.kind === 'generation' ? `generation ${event.entry.generation} live` : 'reload failed')
    },
  }
}

/** One line for a failed reload: where and what, without the frame. */
function summaryOf(entry: Extract<TimelineEntry, { kind: 'failed' }>): string {
  const first = entry.diagnostics[0]
  if (first === undefined) return entry.message
  const where = first.file ? `${first.file}${first.line ? `:${first.line}` : ''} ` : ''
  const more = entry.diagnostics.length > 1 ? ` (+${entry.diagnostics.length - 1} more)` : ''
  return `${where}${first.message}${more}`
}

function entryView(entry: TimelineEntry, live: number, open: TimelineEntry | undefined): HTMLElement {
  if (entry.kind === 'failed') {
    return h(
      'li',
      { class: `entry failed${entry.resolved ? ' resolved' : ''}` },
      h('p', null, badge(entry.resolved ? 'fixed since' : 'reload failed', entry.resolved ? 'muted' : 'bad'), ' ', time(entry.at), h('span', { class: 'muted' }, ` after ${ms(entry.durationMs)}`)),
      // The open failure is shown whole at the top of the page; here it is one line that points there.
      h('p', { class: 'muted' }, summaryOf(entry), entry === open ? ' (details above)' : ''),
    )
  }
  return h(
    'li',
    { class: 'entry' },
    h(
      'p',
      null,
      h('a', { href: `#/catalog/${entry.generation}` }, `generation ${entry.generation}`),
      ' ',
      entry.generation === live ? badge('live', 'ok') : badge('retired'),
      ' ',
      time(entry.at),
      h('span', { class: 'muted' }, entry.durationMs > 0 ? ` published in ${ms(entry.durationMs)}` : ' first load'),
    ),
    diffView(entry.diff),
    entry.diagnostics.length > 0 ? diagnosticsView(entry.diagnostics) : null,
  )
}

function diffView(diff: DiffView): HTMLElement | null {
  const items = [
    ...diff.tools.added.map((n) => ['+', n, 'tool']),
    ...diff.tools.changed.map((n) => ['~', n, 'tool']),
    ...diff.tools.removed.map((n) => ['−', n, 'tool']),
    ...diff.skills.added.map((n) => ['+', n, 'skill']),
    ...diff.skills.changed.map((n) => ['~', n, 'skill']),
    ...diff.skills.removed.map((n) => ['−', n, 'skill']),
  ]
  if (items.length === 0) return null
  const word = { '+': 'added', '~': 'changed', '−': 'removed' } as Record<string, string>
  return h(
    'ul',
    { class: 'diff', 'aria-label': 'changes' },
    items.map(([sign, name, kind]) => h('li', { class: `d${word[sign!]}` }, h('span', { 'aria-label': word[sign!] }, sign!), ` ${name} `, h('span', { class: 'muted' }, kind!))),
  )
}

export function diagnosticsView(diagnostics: readonly DiagnosticView[], fallback?: string): HTMLElement {
  if (diagnostics.length === 0) return h('p', { class: 'error' }, fallback ?? '')
  return h(
    'div',
    { class: 'diagnostics' },
    diagnostics.map((d) =>
      h(
        'div',
        { class: 'diagnostic' },
        h('p', null, badge(d.code, 'bad'), ' ', d.file ? h('code', { class: 'where' }, `${d.file}${d.line ? `:${d.line}${d.column ? `:${d.column}` : ''}` : ''}`) : d.source ?? '', ' ', d.message),
        d.frame ? h('pre', { class: 'frame', 'aria-label': 'code frame' }, d.frame) : null,
      ),
    ),
  )
}

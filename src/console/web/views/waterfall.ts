import type { CallView, QuestionView, SegmentView, TurnDetail } from '../../types.js'
import { h, ms } from '../dom.js'

/** A running call's last progress report, as the bar shows it. */
export interface BarProgress {
  readonly done: number
  readonly total?: number
  readonly message?: string
}

/** What the waterfall says about each kind of stretch, in words (the colour only repeats it). */
const WORDS: Record<SegmentView['kind'], string> = {
  waited: 'waited',
  approval: 'approval',
  body: 'body',
  commit: 'commit',
  running: 'running',
}

/** How often the bars of a turn with open calls are redrawn while the page shows it. */
const TICK_MS = 250

export interface Waterfall {
  readonly element: HTMLElement
  /** A running call's progress report: drawn inside its bar. */
  progress(callId: string, progress: BarProgress): void
  /** Stops redrawing (the turn view was replaced). */
  stop(): void
}

interface Lane {
  readonly call: CallView
  readonly depth: number
  readonly track: HTMLElement
  readonly total: HTMLElement
  readonly segments: { readonly view: SegmentView; readonly element: HTMLElement }[]
  readonly questions: { readonly view: QuestionView; readonly element: HTMLElement }[]
  progress?: BarProgress
  fill?: HTMLElement
}

/**
 * A turn's calls on one time axis: a lane per call in model order, its nested calls indented under
 * it, each bar cut into its stretches (waited, approval, body, commit; running while open), so calls
 * that ran in parallel overlap. Every bar carries its durations as text (its accessible name and a
 * tooltip per stretch); questions a call asked are marks on its bar, and a running call's progress
 * fills its open stretch. While a call is open the bars are redrawn against the server's clock.
 */
export function waterfall(turn: TurnDetail, onPick: (callId: string) => void): Waterfall {
  // The server's clock minus the page's, when the turn was read: open stretches run to the server's now.
  const skew = turn.now - Date.now()
  const lanes: Lane[] = []
  const walk = (calls: readonly CallView[], depth: number) => {
    for (const call of calls) {
      lanes.push(laneOf(call, depth))
      if (call.calls?.length) walk(call.calls, depth + 1)
    }
  }
  walk(turn.calls, 0)
  const axis = h('div', { class: 'wf-axis', 'aria-hidden': 'true' })
  const list = h(
    'ol',
    { class: 'wf-lanes' },
    lanes.map((lane) =>
      h(
        'li',
        { class: 'wf-lane', 'data-call': lane.call.callId, 'data-depth': lane.depth },
        h(
          'div',
          { class: 'wf-who' },
          h('button', { type: 'button', class: 'link', 'aria-label': `show call ${lane.call.name} ${lane.call.callId}`, onclick: () => onPick(lane.call.callId) }, lane.call.name),
          ' ',
          lane.total,
        ),
        lane.track,
      ),
    ),
  )
  // Through the CSS object model: the page's policy allows no inline style attributes.
  for (const item of list.children) (item as HTMLElement).style.setProperty('--depth', (item as HTMLElement).dataset.depth ?? '0')
  const element = h(
    'section',
    { class: 'waterfall', 'aria-label': 'calls on a time axis', 'aria-live': 'off' },
    h('h3', null, 'Waterfall'),
    legend(),
    h('div', { class: 'wf-grid' }, h('div', { class: 'wf-who wf-head', 'aria-hidden': 'true' }, 'call'), axis),
    list,
  )
  let timer: ReturnType<typeof setInterval> | undefined
  const open = () => lanes.some((lane) => lane.segments.some((s) => s.view.to === undefined))
  const draw = () => {
    if (!element.isConnected && timer !== undefined) return stop()
    layout(lanes, axis, Date.now() + skew, turn.endedAt)
    if (!open()) stop()
  }
  const stop = () => {
    clearInterval(timer)
    timer = undefined
  }
  layout(lanes, axis, Date.now() + skew, turn.endedAt)
  if (open()) timer = setInterval(draw, TICK_MS)
  return {
    element,
    progress(callId, progress) {
      const lane = lanes.find((l) => l.call.callId === callId)
      if (lane === undefined || lane.call.result !== undefined) return
      lane.progress = progress
      layout(lanes, axis, Date.now() + skew, turn.endedAt)
    },
    stop,
  }
}

function laneOf(call: CallView, depth: number): Lane {
  const segments = call.segments.map((view) => ({ view, element: h('span', { class: `wf-seg ${view.kind}` }) }))
  const questions = (call.questions ?? []).map((view) => ({ view, element: h('span', { class: `wf-q ${view.action ?? 'open'}` }, '?') }))
  const track = h(
    'div',
    { class: 'wf-track', role: 'img' },
    segments.map((s) => s.element),
    questions.map((q) => q.element),
  )
  const lane: Lane = { call, depth, track, total: h('span', { class: 'muted wf-total' }), segments, questions }
  if (call.progress !== undefined && call.result === undefined) lane.progress = call.progress
  return lane
}

/** Places every stretch and mark against the axis from the turn's first call start to `now` (or its last end). */
function layout(lanes: readonly Lane[], axis: HTMLElement, now: number, turnEnded: number | undefined): void {
  let from = Number.POSITIVE_INFINITY
  let to = Number.NEGATIVE_INFINITY
  for (const lane of lanes) {
    from = Math.min(from, lane.call.startedAt)
    for (const { view } of lane.segments) to = Math.max(to, view.to ?? Math.max(now, view.from))
  }
  if (!Number.isFinite(from)) return
  if (!Number.isFinite(to)) to = turnEnded ?? now
  const span = Math.max(1, to - from)
  const x = (at: number) => `${(((at - from) / span) * 100).toFixed(3)}%`
  const w = (a: number, b: number) => `${((Math.max(0, b - a) / span) * 100).toFixed(3)}%`
  drawAxis(axis, span)
  for (const lane of lanes) {
    const words: string[] = []
    let fillInto: HTMLElement | undefined
    for (const { view, element } of lane.segments) {
      const end = view.to ?? Math.max(now, view.from)
      element.style.left = x(view.from)
      element.style.width = w(view.from, end)
      const text = `${WORDS[view.kind]} ${duration(end - view.from)}${view.to === undefined ? ' so far' : ''}`
      element.title = view.kind === 'approval' && lane.call.approval?.decision ? `${text} (${lane.call.approval.decision})` : text
      element.classList.toggle('open', view.to === undefined)
      words.push(element.title)
      if (view.to === undefined && (view.kind === 'running' || view.kind === 'body')) fillInto = element
    }
    for (const { view, element } of lane.questions) {
      const end = view.answeredAt ?? now
      element.style.left = x(view.askedAt)
      element.style.width = w(view.askedAt, end)
      const answer = view.action === undefined ? `waiting ${duration(end - view.askedAt)}` : `${view.action}${view.content ? ` ${view.content}` : ''}${view.reason ? ` (${view.reason})` : ''} after ${duration(end - view.askedAt)}`
      element.title = `question: ${view.message} → ${answer}`
      element.setAttribute('aria-label', element.title)
      words.push(element.title)
    }
    const progress = lane.progress
    let shown = ''
    if (progress !== undefined && fillInto !== undefined) {
      const known = progress.total !== undefined && progress.total > 0
      const share = known ? Math.min(1, progress.done / progress.total!) : undefined
      lane.fill ??= h('span', { class: 'wf-fill' })
      if (lane.fill.parentElement !== fillInto) fillInto.append(lane.fill)
      lane.fill.style.width = share === undefined ? '100%' : `${(share * 100).toFixed(1)}%`
      lane.fill.classList.toggle('unknown', share === undefined)
      const said = `${known ? `${progress.done} of ${progress.total} (${Math.round(share! * 100)} %)` : `${progress.done} done`}${progress.message ? ` · ${progress.message}` : ''}`
      fillInto.title = `${fillInto.title}, progress ${said}`
      words.push(`progress ${said}`)
      shown = known ? ` · ${Math.round(share! * 100)} %` : ` · ${progress.done} done`
    }
    const { result } = lane.call
    const total = (result?.at ?? now) - lane.call.startedAt
    lane.total.textContent = result ? duration(total) : `running ${duration(total)}${shown}`
    lane.track.setAttribute('aria-label', `${lane.call.name}${lane.depth > 0 ? ` (nested, level ${lane.depth})` : ''}: ${result ? result.status : 'running'}, ${duration(total)}; ${words.join(', ')}`)
    lane.track.title = lane.track.getAttribute('aria-label')!
  }
}

/** Gridlines at a round step, about five across the span. */
function drawAxis(axis: HTMLElement, span: number): void {
  const rough = span / 5
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? rough
  const ticks: HTMLElement[] = []
  for (let at = 0; at <= span + step / 1e6; at += step) {
    const tick = h('span', { class: 'wf-tick' }, at === 0 ? '0' : duration(at))
    tick.style.left = `${((at / span) * 100).toFixed(3)}%`
    ticks.push(tick)
  }
  while (axis.firstChild) axis.removeChild(axis.firstChild)
  axis.append(...ticks)
}

function legend(): HTMLElement {
  return h(
    'ul',
    { class: 'wf-legend', 'aria-label': 'legend' },
    (['waited', 'approval', 'body', 'commit', 'running'] as const).map((kind) => h('li', null, h('span', { class: `wf-seg ${kind}`, 'aria-hidden': 'true' }), WORDS[kind])),
    h('li', null, h('span', { class: 'wf-q accept', 'aria-hidden': 'true' }, '?'), 'question'),
  )
}

/** A duration for people: milliseconds under a second, then seconds, then minutes. */
export function duration(value: number): string {
  if (value < 1_000) return ms(value)
  if (value < 60_000) return `${(value / 1_000).toFixed(value < 10_000 ? 2 : 1)} s`
  const minutes = Math.floor(value / 60_000)
  return `${minutes} min ${Math.round((value - minutes * 60_000) / 1_000)} s`
}

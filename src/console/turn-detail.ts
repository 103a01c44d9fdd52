import { SeamError } from '../errors.js'
import { MAX_TURN_PAGE } from '../runtime/journal/turn-query.js'
import type { JournalEvent, JournalStore } from '../seams/journal.js'
import type { CallView, ProgressView, QuestionView, SegmentView, TurnDetail } from './types.js'

/** How many of the newest turns a short id is looked for in (the page shows ids cut to 8 characters). */
export const SHORT_ID_TURNS = 2_000

/**
 * The events of the turn `id` names: its whole id, or the start of one (as the journal list shows
 * it) among the newest `SHORT_ID_TURNS` turns. None is `UNKNOWN_TURN`; several, `INVALID_OPTIONS`.
 */
export async function findTurn(journal: JournalStore, id: string): Promise<{ turnId: string; events: JournalEvent[] }> {
  const events = await journal.read(id)
  if (events.length > 0) return { turnId: id, events }
  const matches = new Set<string>()
  let before: string | undefined
  for (let seen = 0; seen < SHORT_ID_TURNS && matches.size < 2; ) {
    const page = await journal.turns({ limit: MAX_TURN_PAGE, ...(before !== undefined ? { before } : {}) })
    for (const turn of page.turns) if (turn.turnId.startsWith(id)) matches.add(turn.turnId)
    seen += page.turns.length
    if (page.next === undefined) break
    before = page.next
  }
  const [only, other] = matches
  if (only === undefined) throw new SeamError('UNKNOWN_TURN', `no turn ${JSON.stringify(id)} in this journal (nor one whose id starts so among its newest ${SHORT_ID_TURNS} turns)`)
  if (other !== undefined) throw new SeamError('INVALID_OPTIONS', `${JSON.stringify(id)} starts more than one turn id (${only}, ${other}, …): give more of it`)
  return { turnId: only, events: await journal.read(only) }
}

/** A call as `turnDetail` builds it, with what its segments are made from. */
type Building = { -readonly [K in keyof CallView]: CallView[K] } & { body?: { at: number; ms: number } }

/**
 * A turn's events as its calls, in model order (the order of their `tool/call`), each with its
 * approval, questions, result and its segments on the waterfall's time axis; nested calls under
 * their outer call. `progress` gives a running call's last report; `now` is the server's clock
 * (open stretches run to it on the page).
 */
export function turnDetail(turnId: string, events: readonly JournalEvent[], progress?: (callId: string) => ProgressView | undefined, now: number = Date.now()): TurnDetail {
  const calls = new Map<string, Building>()
  let host: string | undefined
  let begunAt: number | undefined
  let endedAt: number | undefined
  for (const event of events) {
    if (event.kind === 'turn/begin') {
      host = event.host
      begunAt = event.at
    }
    if (event.kind === 'turn/end') endedAt = event.at
    if (event.kind === 'tool/call') {
      calls.set(event.callId, {
        callId: event.callId,
        name: event.name,
        arguments: event.arguments,
        generation: event.generation,
        at: event.at,
        startedAt: event.at,
        segments: [],
        ...(event.parent !== undefined ? { parent: event.parent } : {}),
      })
      continue
    }
    const call = 'callId' in event ? calls.get(event.callId) : undefined
    if (call === undefined) continue
    if (event.kind === 'approval/asked') call.approval = { reason: event.reason, summary: event.summary, askedAt: event.at }
    else if (event.kind === 'approval/decided') call.approval = { reason: '', summary: '', askedAt: event.at, ...call.approval, decision: event.decision, decidedAt: event.at }
    else if (event.kind === 'question/asked') {
      call.questions = [...(call.questions ?? []), { questionId: event.questionId, message: event.message, askedAt: event.at }]
    } else if (event.kind === 'question/answered') {
      call.questions = (call.questions ?? []).map((q): QuestionView =>
        q.questionId !== event.questionId
          ? q
          : {
              ...q,
              answeredAt: event.at,
              action: event.action,
              ...(event.content !== undefined ? { content: event.content } : {}),
              ...(event.reason !== undefined ? { reason: event.reason } : {}),
            },
      )
    } else if (event.kind === 'tool/result') {
      call.result = {
        status: event.status,
        ...(event.code !== undefined ? { code: event.code } : {}),
        ...(event.policy !== undefined ? { policy: event.policy } : {}),
        content: event.content,
        durationMs: event.durationMs,
        at: event.at,
      }
      // The call began `durationMs` before its outcome: earlier than its `tool/call` when it waited in a batch.
      call.startedAt = Math.min(call.at, Math.round(event.at - event.durationMs))
      if (event.bodyAt !== undefined) call.body = { at: event.bodyAt, ms: event.bodyMs ?? 0 }
    }
  }
  for (const call of calls.values()) {
    call.segments = segmentsOf(call, endedAt)
    delete call.body
    const last = progress !== undefined && call.result === undefined ? progress(call.callId) : undefined
    if (last !== undefined) call.progress = last
  }
  // Nested calls under their outer call (a Code Mode run's sub-calls), in the order they were made.
  const top: CallView[] = []
  for (const call of calls.values()) {
    const outer = call.parent === undefined ? undefined : calls.get(call.parent)
    if (outer === undefined) top.push(call)
    else outer.calls = [...(outer.calls ?? []), call]
  }
  return {
    turnId,
    ...(host !== undefined ? { host } : {}),
    ...(begunAt !== undefined ? { begunAt } : {}),
    ...(endedAt !== undefined ? { endedAt } : {}),
    now,
    calls: top,
  }
}

/**
 * A call's stretches, from its start: waited, approval (asked to decided), waited again, body,
 * commit (body end to outcome). A call that ran no body (denied, cancelled before it started)
 * waited all its time but the approval's. A call still open ends with an open stretch (the
 * approval it waits for, else `running`), closed at the turn's end for a turn that ended without it
 * (interrupted). Journal times are whole milliseconds: the stretches are kept in order.
 */
export function segmentsOf(call: Building, turnEnded?: number): SegmentView[] {
  const segments: SegmentView[] = []
  let at = call.startedAt
  const add = (kind: SegmentView['kind'], to: number | undefined): void => {
    if (to === undefined) {
      segments.push(turnEnded === undefined ? { kind, from: at } : { kind, from: at, to: Math.max(at, turnEnded) })
      return
    }
    const end = Math.max(at, to)
    if (end > at || kind === 'body') segments.push({ kind, from: at, to: end })
    at = end
  }
  const { approval, result, body } = call
  if (approval !== undefined) {
    add('waited', approval.askedAt)
    if (approval.decidedAt === undefined && result === undefined) {
      add('approval', undefined)
      return segments
    }
    add('approval', approval.decidedAt ?? result?.at)
  }
  if (result === undefined) {
    add('running', undefined)
    return segments
  }
  if (body === undefined) {
    add('waited', result.at)
    return segments
  }
  add('waited', body.at)
  add('body', body.at + body.ms)
  add('commit', result.at)
  return segments
}

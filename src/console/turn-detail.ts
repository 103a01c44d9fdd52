import { SeamError } from '../errors.js'
import { MAX_TURN_PAGE } from '../runtime/journal/turn-query.js'
import type { JournalEvent, JournalStore } from '../seams/journal.js'
import type { CallView, ProgressView, TurnDetail } from './types.js'

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

/** A turn's events as its calls, in model order (the order of their `tool/call`), each with its approval and result. */
export function turnDetail(turnId: string, events: readonly JournalEvent[], progress?: (callId: string) => ProgressView | undefined): TurnDetail {
  const calls = new Map<string, { -readonly [K in keyof CallView]: CallView[K] }>()
  let host: string | undefined
  for (const event of events) {
    if (event.kind === 'turn/begin') host = event.host
    if (event.kind === 'tool/call') {
      calls.set(event.callId, {
        callId: event.callId,
        name: event.name,
        arguments: event.arguments,
        generation: event.generation,
        at: event.at,
        ...(event.parent !== undefined ? { parent: event.parent } : {}),
      })
      continue
    }
    const call = 'callId' in event ? calls.get(event.callId) : undefined
    if (call === undefined) continue
    if (event.kind === 'approval/asked') call.approval = { reason: event.reason, summary: event.summary }
    else if (event.kind === 'approval/decided') call.approval = { reason: '', summary: '', ...call.approval, decision: event.decision }
    else if (event.kind === 'tool/result') {
      call.result = {
        status: event.status,
        ...(event.code !== undefined ? { code: event.code } : {}),
        ...(event.policy !== undefined ? { policy: event.policy } : {}),
        content: event.content,
        durationMs: event.durationMs,
      }
    }
  }
  if (progress !== undefined) {
    for (const call of calls.values()) {
      const last = call.result === undefined ? progress(call.callId) : undefined
      if (last !== undefined) call.progress = last
    }
  }
  // Nested calls under their outer call (a Code Mode run's sub-calls), in the order they were made.
  const top: CallView[] = []
  for (const call of calls.values()) {
    const outer = call.parent === undefined ? undefined : calls.get(call.parent)
    if (outer === undefined) top.push(call)
    else outer.calls = [...(outer.calls ?? []), call]
  }
  return { turnId, ...(host !== undefined ? { host } : {}), calls: top }
}

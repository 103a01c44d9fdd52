import type { JournalEvent } from '../runtime/journal/types.js'
import type { CallView, TurnDetail } from './types.js'

/** A turn's events as its calls, in model order (the order of their `tool/call`), each with its approval and result. */
export function turnDetail(turnId: string, events: readonly JournalEvent[]): TurnDetail {
  const calls = new Map<string, { -readonly [K in keyof CallView]: CallView[K] }>()
  let host: string | undefined
  for (const event of events) {
    if (event.kind === 'turn/begin') host = event.host
    if (event.kind === 'tool/call') {
      calls.set(event.callId, { callId: event.callId, name: event.name, arguments: event.arguments, generation: event.generation, at: event.at })
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
  return { turnId, ...(host !== undefined ? { host } : {}), calls: [...calls.values()] }
}

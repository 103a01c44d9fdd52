import { messageOf } from '../../errors.js'
import { type CallState, settle } from './state.js'

/** Stage 1: the durable `tool/call`. If it cannot be written, the body never runs. */
export function journalCall(state: CallState): Promise<void> {
  return appendCall(state).then(
    () => {
      state.journaled = true
    },
    (error: unknown) => callNotRecorded(state, error),
  )
}

/** Writes `tool/call`; the caller marks the call journaled once this resolves (see `runCall`). */
export function appendCall(state: CallState): Promise<void> {
  const { ctx, call } = state
  const raw = typeof call.arguments === 'string' ? call.arguments : safeStringify(call.arguments)
  state.raw = raw
  return ctx.append({
      kind: 'tool/call',
      turnId: ctx.turn.turnId,
      seq: ctx.nextSeq(),
      at: Date.now(),
      callId: call.callId,
      name: call.name,
      arguments: raw,
      generation: ctx.generation.number,
  })
}

export function callNotRecorded(state: CallState, error: unknown): void {
  settle(state, {
    status: 'failed',
    code: 'JOURNAL_UNAVAILABLE',
    message: `The call to "${state.call.name}" was not run because it could not be recorded in the journal. It is safe to retry later.`,
    details: { error: messageOf(error) },
  })
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return '[unserializable arguments]'
  }
}

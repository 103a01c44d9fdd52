/**
 * Checks of what a caller hands a turn's runtime (`execute`, `executeBatch`, `resume`): a call, a
 * batch, a signal, a progress listener. Misuse throws `INVALID_CALL` before anything runs.
 */
import { SeamError } from '../../errors.js'
import type { ToolCall } from '../../seams/calls.js'

export function assertBatch(calls: readonly ToolCall[]): void {
  if (!Array.isArray(calls)) throw new SeamError('INVALID_CALL', 'executeBatch expects an array of calls')
  // A call id repeated in the batch is settled like any reused id: DUPLICATE_CALL, in model order.
  for (const call of calls) assertCall(call)
}

export function assertListener(listener: unknown, method: string): void {
  if (listener !== undefined && typeof listener !== 'function') throw new SeamError('INVALID_CALL', `${method}: \`onProgress\` must be a function`)
}

export function assertSignal(signal: unknown, method: string): void {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new SeamError('INVALID_CALL', `${method}: \`signal\` must be an AbortSignal`)
  }
}

/** Empty or white space only. An id that starts with a visible ASCII character is neither, and is not trimmed (a call, and maybe a copy). */
function isBlank(text: string): boolean {
  const first = text.charCodeAt(0)
  return !(first > 32 && first < 127) && text.trim() === ''
}

export function assertCall(call: ToolCall): void {
  if (call === null || typeof call !== 'object') throw new SeamError('INVALID_CALL', 'a tool call must be an object')
  if (typeof call.callId !== 'string' || isBlank(call.callId)) {
    throw new SeamError('INVALID_CALL', 'a tool call needs a non-blank string callId')
  }
  if (typeof call.name !== 'string') throw new SeamError('INVALID_CALL', `call "${call.callId}": name must be a string`)
  const args = call.arguments as unknown
  if (args !== undefined && typeof args !== 'string' && (args === null || typeof args !== 'object')) {
    throw new SeamError('INVALID_CALL', `call "${call.callId}": arguments must be JSON text or an object`)
  }
}

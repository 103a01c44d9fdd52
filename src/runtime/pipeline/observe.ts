import type { CallState } from './state.js'
import type { ToolExecution } from '../../seams/calls.js'

/** Stage 10: live `tools/result` observers see the frozen outcome; their failures are contained. */
export function observe(state: CallState): void {
  const observers = state.ctx.generation.hooks.result
  const outcome = state.outcome
  if (outcome && state.probe) state.probe.settled({ outcome, capability: state.capability, arguments: state.raw })
  if (observers.length === 0 || !outcome) return
  const exec = state.exec ?? fallbackExec(state)
  for (const observer of observers) {
    try {
      const returned = observer(exec, outcome) as unknown
      if (returned instanceof Promise) returned.catch(() => {})
    } catch {
      // An observer cannot change or fail the outcome.
    }
  }
}

function fallbackExec(state: CallState): ToolExecution {
  return Object.freeze({
    callId: state.call.callId,
    name: state.call.name,
    arguments: Object.freeze({}),
    token: Symbol(state.call.callId),
    turn: state.ctx.turn,
    generation: state.ctx.generation.number,
    signal: state.signal,
  })
}

import { messageOf } from '../../errors.js'
import { ABORTED, policyTimedOut, policyWait, TIMED_OUT } from './stage-deadline.js'
import type { CallState } from './state.js'
import { deny, settle } from './settle.js'
import { notStarted } from './settlement.js'

/**
 * Stage 6: monotonic owner rules, after approval. A reason string denies; nothing a hook or a
 * person answered can override it. A guard that throws or returns a non-string denies (fail closed).
 */
export function checkGuards(state: CallState): Promise<void> | undefined {
  if (!state.args || state.ctx.generation.hooks.guards.length === 0) return undefined
  return runGuards(state)
}

async function runGuards(state: CallState): Promise<void> {
  const { exec } = state
  const guards = state.ctx.generation.hooks.guards
  if (!exec) return
  for (const guard of guards) {
    let reason: unknown
    try {
      reason = guard(exec)
      if (reason instanceof Promise) reason = await policyWait(state, reason)
    } catch (error) {
      reason = `a guard failed: ${messageOf(error)}`
    }
    if (reason === ABORTED) {
      settle(state, notStarted(exec.name))
      return
    }
    if (reason === TIMED_OUT) {
      deny(state, policyTimedOut(state, 'guard', 'a guard'))
      return
    }
    if (reason === undefined) continue
    const text = typeof reason === 'string' && reason !== '' ? reason : 'a guard returned an invalid value'
    state.probe?.guardDenied(text)
    deny(state, {
      status: 'denied',
      code: 'DENIED',
      policy: 'guard',
      reason: text,
      message: `The call to "${exec.name}" was denied: ${text}.`,
    })
    return
  }
}

import { messageOf } from '../../errors.js'
import { ABORTED, policyTimedOut, policyWait, TIMED_OUT } from './stage-deadline.js'
import type { CallState } from './state.js'
import { deny, settle } from './settle.js'
import { notStarted } from './settlement.js'
import type { PreDecision, ToolExecution } from '../../seams/calls.js'

/**
 * Stage 4: visibility (platforms, scopes, permissions through the root `PermissionHost`), then the
 * pre-execute middleware. `ask` decisions are collected for the approval stage. Fails closed: a hook
 * that throws or answers something else denies.
 */
export function checkPermission(state: CallState): Promise<void> | undefined {
  const { ctx, capability } = state
  if (!capability || !state.args) return undefined
  const restricted = capability.permissions.length + capability.platforms.length + capability.scopes.length > 0
  // The common case (no restrictions, no hooks) stays synchronous: no promise, no microtask hop.
  if (!restricted && ctx.generation.hooks.preExecute.length === 0) return undefined
  return checkRestricted(state, restricted)
}

async function checkRestricted(state: CallState, restricted: boolean): Promise<void> {
  const { ctx, capability, exec } = state
  if (!capability || !exec) return
  const visible = restricted ? await policyWait(state, ctx.ingress.isVisible(capability, ctx.turn)) : true
  if (visible === ABORTED) {
    settle(state, notStarted(exec.name))
    return
  }
  if (visible === TIMED_OUT) {
    deny(state, policyTimedOut(state, 'permission', 'the permission host'))
    return
  }
  if (!visible) {
    deny(state, {
      status: 'denied',
      code: 'DENIED',
      policy: 'permission',
      reason: 'not permitted for this principal or origin',
      message: `The call to "${exec.name}" was denied: it is not permitted for this user or in this conversation.`,
    })
    return
  }
  const hooks = ctx.generation.hooks.preExecute
  if (hooks.length === 0) return
  let decision: PreDecision
  try {
    const answer = await policyWait(state, runPre(hooks, 0, exec))
    if (answer === ABORTED) {
      settle(state, notStarted(exec.name))
      return
    }
    if (answer === TIMED_OUT) {
      deny(state, policyTimedOut(state, 'hook', 'a pre-execute hook'))
      return
    }
    decision = answer
  } catch (error) {
    decision = { kind: 'deny', reason: `a pre-execute hook failed: ${messageOf(error)}` }
  }
  if (decision?.kind === 'allow') return
  if (decision?.kind === 'ask') {
    state.askReasons ??= []
    state.askReasons.push(typeof decision.reason === 'string' && decision.reason ? decision.reason : 'a policy asked for approval')
    return
  }
  const reason =
    decision?.kind === 'deny' && typeof decision.reason === 'string' && decision.reason
      ? decision.reason
      : 'a pre-execute hook returned an invalid decision'
  deny(state, {
    status: 'denied',
    code: 'DENIED',
    policy: 'hook',
    reason,
    message: `The call to "${exec.name}" was denied by policy: ${reason}.`,
  })
}

type PreHook = (exec: ToolExecution, next: () => Promise<PreDecision>) => PreDecision | Promise<PreDecision>

async function runPre(hooks: readonly PreHook[], index: number, exec: ToolExecution): Promise<PreDecision> {
  const hook = hooks[index]
  if (!hook) return { kind: 'allow' }
  let called = false
  return hook(exec, () => {
    if (called) return Promise.reject(new Error('next() called twice'))
    called = true
    return runPre(hooks, index + 1, exec)
  })
}

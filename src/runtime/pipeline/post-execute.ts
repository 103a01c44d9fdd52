import { messageOf } from '../../errors.js'
import { checkContent, contentText } from '../../seams/content.js'
import { ABORTED, policyTimedOut, policyWait, TIMED_OUT } from './stage-deadline.js'
import type { CallState } from './state.js'
import { text, toDeferred } from './content.js'
import { settle } from './settle.js'
import type { Settlement } from './settlement.js'
import type { DispatchResult, PostDecision, PostExecuteHook, ToolExecution } from '../../seams/calls.js'

/**
 * Stage 8: post-execute middleware over a dispatched result. `accept` may replace the content or
 * the value (never both) and add contexts; `block` turns the result into a valueless failure and
 * keeps only the block's own contexts. A hook that throws or answers wrongly blocks (fail closed).
 */
export function postExecute(state: CallState): Promise<void> | undefined {
  if (state.ctx.generation.hooks.postExecute.length === 0 || !state.args || !state.dispatch) return undefined
  return runHooks(state)
}

async function runHooks(state: CallState): Promise<void> {
  const hooks = state.ctx.generation.hooks.postExecute
  const { exec, dispatch } = state
  if (!exec || !dispatch) return
  // Only a result the body produced is post-processed; cancellation and timeouts stay as they are.
  if (state.settled && state.settled.code !== 'TOOL_ERROR') return
  let decision: PostDecision
  try {
    const answer = await policyWait(state, runPost(hooks, 0, exec, Object.freeze({ ...dispatch })))
    if (answer === ABORTED) {
      // The caller gave up while a hook held the result: cancellation beats success (a failure stays).
      settle(state, { status: 'cancelled', code: 'ABORTED', message: `The call to "${exec.name}" was cancelled; its result was discarded.` })
      return
    }
    if (answer === TIMED_OUT) {
      // Fail closed: a result no hook could vet in time is withheld, as a block would.
      withhold(state, policyTimedOut(state, 'post-execute', 'a post-execute hook'))
      return
    }
    decision = answer
  } catch (error) {
    decision = { kind: 'block', feedback: `a post-execute hook failed: ${messageOf(error)}` }
  }
  if (decision?.kind === 'accept') {
    const replacesContent = decision.content !== undefined
    const replacesValue = 'value' in decision && decision.value !== undefined
    if (replacesContent && replacesValue) {
      block(state, 'a post-execute hook tried to replace both the content and the value')
      return
    }
    try {
      state.decisionContexts = (decision.contexts ?? []).map(toDeferred)
    } catch (error) {
      block(state, `a post-execute hook returned invalid contexts: ${messageOf(error)}`)
      return
    }
    if (replacesContent) state.content = decision.content
    if (replacesValue && state.hasValue) {
      state.value = decision.value
      // The provider's content showed the old value: the new one is rendered instead.
      state.providerContent = undefined
    }
    return
  }
  if (decision?.kind === 'block' && (typeof decision.feedback === 'string' || Array.isArray(decision.feedback))) {
    let contexts: ReturnType<typeof toDeferred>[] = []
    try {
      contexts = (decision.contexts ?? []).map(toDeferred)
    } catch {
      contexts = []
    }
    const { feedback } = decision
    if (typeof feedback === 'string') {
      block(state, feedback, contexts)
      return
    }
    const checked = checkContent(feedback)
    if (!checked.ok) {
      block(state, `a post-execute hook blocked with invalid feedback: ${checked.problem}`)
      return
    }
    // The blocks follow the sentence that says the result was withheld; `reason` keeps their text.
    block(state, contentText(checked.content.filter((b) => b.type === 'text')), contexts)
    state.content = [...text(`The result of "${state.call.name}" was withheld by policy:`), ...checked.content]
    return
  }
  block(state, 'a post-execute hook returned an invalid decision')
}

function block(state: CallState, feedback: string, contexts: ReturnType<typeof toDeferred>[] = []): void {
  withhold(
    state,
    {
      status: 'failed',
      code: 'POST_BLOCKED',
      reason: feedback,
      message: `The result of "${state.call.name}" was withheld by policy: ${feedback}`,
    },
    contexts,
  )
}

function withhold(state: CallState, settlement: Settlement, contexts: ReturnType<typeof toDeferred>[] = []): void {
  state.hasValue = false
  state.value = undefined
  state.content = undefined
  state.providerContent = undefined
  // A block drops the tool's deferred contexts and exposes only the blocking policy's own.
  state.toolContexts = undefined
  state.decisionContexts = contexts
  state.settled = settlement
}

function runPost(hooks: readonly PostExecuteHook[], index: number, exec: ToolExecution, result: DispatchResult): Promise<PostDecision> {
  const hook = hooks[index]
  if (!hook) return Promise.resolve({ kind: 'accept' })
  let called = false
  return Promise.resolve(
    hook(exec, result, () => {
      if (called) return Promise.reject(new Error('next() called twice'))
      called = true
      return runPost(hooks, index + 1, exec, result)
    }),
  )
}

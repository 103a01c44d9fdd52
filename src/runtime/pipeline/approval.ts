import { performance } from 'node:perf_hooks'
import { messageOf } from '../../errors.js'
import { askApproval, summarize } from '../approvals/approval.js'
import type { ApprovalAnswer } from '../../seams/approval.js'
import type { ApprovalDecision } from '../../seams/journal.js'
import { denial, journalDown } from './denials.js'
import { checkStillLive } from './generation-check.js'
import { holdForOuter, park } from './park.js'
import { ABORTED, journalTimedOut, journalWait, policyTimedOut, policyWait, TIMED_OUT } from './stage-deadline.js'
import type { CallState } from './state.js'
import { deny, settle } from './settle.js'
import { notStarted } from './settlement.js'

/**
 * Stage 5: decide whether a person must approve, ask the turn's `ApprovalPort` once, journal the
 * question and the answer. Only `allowed-*` continues; everything else is a denial (fail closed).
 */
export function checkApproval(state: CallState): Promise<void> | undefined {
  if (!state.capability || !state.args || state.replayed) return undefined
  const reason = approvalReason(state)
  // No prompt needed without consulting `risk` (modes never/always/once): stay synchronous.
  if (reason === undefined) return undefined
  if (typeof reason === 'string') return ask(state, reason)
  return askOnceKnown(state, reason)
}

/**
 * Asks once a `risk()` reason is known, if there is one. Its own function: a closure over `state`
 * inside `checkApproval` can make every call allocate a context for it, asked or not.
 */
function askOnceKnown(state: CallState, reason: Promise<string | undefined>): Promise<void> {
  return reason.then((r) => (r === undefined ? undefined : ask(state, r)))
}

async function ask(state: CallState, reason: string): Promise<void> {
  const { ctx, exec } = state
  if (!exec) return
  const summary = summarize(exec.name, exec.arguments)
  if (!(await recorded(state, { kind: 'approval/asked', turnId: ctx.turn.turnId, seq: ctx.nextSeq(), at: Date.now(), callId: exec.callId, name: exec.name, reason, summary }))) return
  await askAndApply(state, reason, summary)
}

/**
 * Asks the turn's port, once `approval/asked` is journaled, and applies the answer: `deferred`
 * parks the call. A resume whose tool changed asks again through here (its question is journaled).
 */
export async function askAndApply(state: CallState, reason: string, summary: string): Promise<void> {
  const { ctx, exec } = state
  if (!exec) return
  const { turn } = ctx
  state.probe?.approvalAsked(reason)
  const asked = performance.now()
  const port = turn.unattended ? undefined : turn.ports.approval
  const timeoutMs = turn.policy.approvalTimeoutMs ?? ctx.limits.approvalTimeoutMs
  const answers = answersFor(state)
  const { decision, error } = await askApproval(
    port,
    { callId: exec.callId, name: exec.name, arguments: exec.arguments, summary, reason, session: turn.session, answers },
    state.signal,
    timeoutMs,
    ctx.endSignal?.(),
  )
  state.probe?.approvalDecided(decision, performance.now() - asked)
  if (decision === 'cancelled' && ctx.ended() && !state.signal.aborted) {
    // The turn ended while its question was open: withdrawn, and the call settles as an ended turn's do.
    if (!(await recorded(state, { kind: 'approval/decided', turnId: turn.turnId, seq: ctx.nextSeq(), at: Date.now(), callId: exec.callId, decision }))) return
    return checkStillLive(state)
  }
  if (decision === 'deferred') return state.parent?.parksNested ? holdForOuter(state, reason, summary, answers) : park(state, reason, summary, answers)
  return applyDecision(state, decision, reason, error)
}

/** Journals `approval/decided`, records a session grant, and denies anything but `allowed-*` (fail closed). */
export async function applyDecision(state: CallState, given: ApprovalDecision, reason: string, error?: string): Promise<void> {
  const { ctx, capability, exec } = state
  if (!capability || !exec) return
  const { turn } = ctx
  const decision = asOffered(given, answersFor(state))
  if (!(await recorded(state, { kind: 'approval/decided', turnId: turn.turnId, seq: ctx.nextSeq(), at: Date.now(), callId: exec.callId, decision }))) return
  if (decision === 'allowed-session' || (decision === 'allowed-once' && capability.approval === 'once')) {
    await ctx.grants.grant(turn, capability)
  }
  if (decision === 'allowed-once' || decision === 'allowed-session') return
  deny(state, denial(exec.name, decision, reason, error))
}

const ONCE: readonly ApprovalAnswer[] = Object.freeze(['allowed-once', 'rejected'])
const SESSION: readonly ApprovalAnswer[] = Object.freeze(['allowed-session', 'rejected'])
const EVERY: readonly ApprovalAnswer[] = Object.freeze(['allowed-once', 'allowed-session', 'rejected'])

/**
 * The answers worth offering (see `ApprovalRequest.answers`): a session grant is consulted only by
 * an `on-risk` tool's own question; `always` and a hook's ask ask every time; `once` grants anyway.
 */
function answersFor(state: CallState): readonly ApprovalAnswer[] {
  if (state.askReasons?.length) return ONCE
  switch (state.capability?.approval) {
    case 'always':
    case 'never':
      return ONCE
    case 'once':
      return SESSION
    default:
      return EVERY
  }
}

/** An allow the question did not offer is recorded as the allow it did offer: what it means here. */
function asOffered(decision: ApprovalDecision, offered: readonly ApprovalAnswer[]): ApprovalDecision {
  if ((decision !== 'allowed-once' && decision !== 'allowed-session') || offered.includes(decision)) return decision
  return offered.find((answer) => answer !== 'rejected') ?? decision
}

/** Why this call needs a person's approval, or `undefined` when it does not. */
function approvalReason(state: CallState): string | undefined | Promise<string | undefined> {
  const { capability, binding, args } = state
  if (!capability || !binding || !args) return undefined
  if (state.askReasons?.length) return state.askReasons.join('; ')
  switch (capability.approval) {
    case 'never':
      return undefined
    case 'always':
      return `"${capability.name}" always asks for approval`
    case 'once':
      return unlessGranted(state, `first use of "${capability.name}" in this session`)
    default:
      return onRisk(state)
  }
}

async function onRisk(state: CallState): Promise<string | undefined> {
  const risk = await riskOf(state)
  return risk === undefined || state.settled ? undefined : unlessGranted(state, risk)
}

/** `reason`, unless the session already holds a grant for this tool; synchronous when known here. */
function unlessGranted(state: CallState, reason: string): string | undefined | Promise<string | undefined> {
  const held = state.ctx.grants.has(state.ctx.turn, state.capability!)
  if (typeof held === 'boolean') return held ? undefined : reason
  return held.then((granted) => (granted ? undefined : reason))
}

/** The tool's risk reason; a `risk()` past its deadline (or cut short by an abort) settles the call. */
async function riskOf(state: CallState): Promise<string | undefined> {
  const { capability, binding, args, ctx } = state
  if (binding?.kind === 'feature' && binding.plan.risk) {
    const { slot, plan } = binding
    try {
      let reason: unknown = plan.risk!.call(plan.definition, args as never, {
        turn: ctx.turn,
        owner: slot.owner,
        use: (token) => slot.plugin.resources.use(token),
      })
      if (reason instanceof Promise) reason = await policyWait(state, reason)
      if (reason === ABORTED) {
        settle(state, notStarted(state.call.name))
        return undefined
      }
      if (reason === TIMED_OUT) {
        deny(state, policyTimedOut(state, 'approval', 'the risk check'))
        return undefined
      }
      if (reason === undefined || reason === null || reason === '') return undefined
      return String(reason)
    } catch (error) {
      return `the risk check failed (${messageOf(error)})`
    }
  }
  if (capability?.annotations?.readOnlyHint === true && capability.trustAnnotations !== false) return undefined
  return `"${capability?.name}" declares no risk information`
}

/** Journals an approval event; when the journal fails or stalls past its deadline, settles the call. */
async function recorded(state: CallState, event: Parameters<CallState['ctx']['append']>[0]): Promise<boolean> {
  try {
    if ((await journalWait(state, state.ctx.append(event))) !== TIMED_OUT) return true
    settle(state, journalTimedOut(state, 'its approval'))
  } catch (error) {
    settle(state, journalDown(state.call.name, error))
  }
  return false
}

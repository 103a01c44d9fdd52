import { randomBytes } from 'node:crypto'
import type { ApprovalAnswer } from '../../seams/approval.js'
import type { ParkedCall } from '../../seams/coordination.js'
import { redactText } from '../base/redact.js'
import type { ApprovalDecision, JournalStore } from '../../seams/journal.js'
import { denial, journalDown } from './denials.js'
import type { CallState } from './state.js'
import { text } from './content.js'
import { settle } from './settle.js'
import type { Settlement } from './settlement.js'
import type { ToolCallOutcome } from '../../seams/calls.js'

/**
 * Parks a call whose approval was deferred: one round in the journal's coordination with everything
 * a resume in another process needs, and two seqs of its turn kept for the `approval/decided` and
 * `tool/result` that will settle it. The call settles `suspended` with `APPROVAL_PENDING` and a
 * resume token; no `tool/result` is written. A resume that asks again parks the next round on the
 * same reserved seqs. `answers` are those the question offered: the round takes no other decision.
 */
export async function park(state: CallState, reason: string, summary: string, answers: readonly ApprovalAnswer[]): Promise<void> {
  const { ctx, capability, exec } = state
  if (!capability || !exec) return
  const { turn } = ctx
  const coordination = turn.journal.coordination
  const previous = state.parked
  const askedAt = Date.now()
  const round: ParkedCall = {
    turnId: turn.turnId,
    callId: exec.callId,
    round: (previous?.round ?? 0) + 1,
    token: randomBytes(18).toString('base64url'),
    name: exec.name,
    arguments: JSON.stringify(exec.arguments),
    // Listed to people and stored like the journal's `approval/asked`: redacted. The arguments are
    // not: a resume, maybe in another process, runs the body with exactly these.
    summary: redactText(summary),
    reason: redactText(reason),
    answers,
    session: turn.session,
    subjectId: turn.principal.subjectId,
    roles: turn.principal.roles,
    owner: turn.owner,
    ...(turn.origin === undefined ? {} : { origin: turn.origin }),
    generation: ctx.generation.number,
    source: capability.source,
    fingerprint: capability.fingerprint,
    decidedSeq: previous?.decidedSeq ?? ctx.nextSeq(),
    resultSeq: previous?.resultSeq ?? ctx.nextSeq(),
    askedAt,
    expiresAt: askedAt + ctx.limits.approvalTtlMs,
    host: coordination.host,
  }
  try {
    await coordination.park(round)
  } catch (error) {
    settle(state, journalDown(exec.name, error))
    return
  }
  state.parked = round
  state.resumeToken = round.token
  settle(state, pendingSettlement(round))
}

/**
 * A nested call of an outer call that parks for it (a Code Mode run): the nested call is not parked
 * itself. It settles `suspended` with the question kept on it (`deferral`), writes no `tool/result`,
 * and its outer call parks one round listing this call's tool, arguments and reason.
 */
export function holdForOuter(state: CallState, reason: string, summary: string, answers: readonly ApprovalAnswer[]): void {
  state.deferral = { reason, summary, answers }
  settle(state, {
    status: 'suspended',
    code: 'APPROVAL_PENDING',
    policy: 'approval',
    reason,
    message: `The call to "${state.call.name}" is waiting for a person to approve it (${reason}); it has not run.`,
  })
}

export function pendingSettlement(round: ParkedCall): Settlement {
  return {
    status: 'suspended',
    code: 'APPROVAL_PENDING',
    policy: 'approval',
    reason: round.reason,
    message: `The call to "${round.name}" is waiting for a person to approve it (${round.reason}); it has not run. It will continue once they decide.`,
  }
}

/** The outcome of a round still waiting for a decision (or for its resume), as `execute` returned it. */
export function pendingOutcome(round: ParkedCall, generation: number): ToolCallOutcome {
  const settled = pendingSettlement(round)
  return Object.freeze({
    callId: round.callId,
    name: round.name,
    generation,
    status: 'suspended',
    code: 'APPROVAL_PENDING',
    policy: 'approval',
    reason: settled.reason,
    content: Object.freeze(text(settled.message).map((block) => Object.freeze(block))),
    durationMs: 0,
    resumeToken: round.token,
  })
}

/**
 * Writes what settles a round without running anything (a rejection, or expiry as `timeout`), at
 * the seqs its turn reserved. Only the process that won the round's settle claim calls this.
 */
export async function writeSettlement(journal: JournalStore, round: ParkedCall, decision: Extract<ApprovalDecision, 'rejected' | 'timeout'>): Promise<void> {
  const settled = denial(round.name, decision, round.reason)
  const at = Date.now()
  const base = { turnId: round.turnId, callId: round.callId, at }
  const { code } = round
  if (code !== undefined) {
    // A Code Mode run parked for a sub-call: the question was the sub-call's, and so is its answer;
    // the sub-call and then the run settle denied, the program is not run again.
    const sub = { turnId: round.turnId, callId: code.subCallId, at }
    await journal.append({ ...sub, kind: 'approval/decided', seq: round.decidedSeq, decision })
    await journal.append({ ...sub, kind: 'tool/result', seq: code.subResultSeq, status: settled.status as 'denied', code: settled.code, policy: settled.policy, content: text(settled.message), durationMs: Math.max(0, at - round.askedAt), parent: round.callId })
  } else {
    await journal.append({ ...base, kind: 'approval/decided', seq: round.decidedSeq, decision })
  }
  await journal.append({
    ...base,
    kind: 'tool/result',
    seq: round.resultSeq,
    status: settled.status as 'denied',
    code: settled.code,
    policy: settled.policy,
    content: text(settled.message),
    durationMs: Math.max(0, at - round.askedAt),
  })
}

import { SeamError } from '../../errors.js'
import type { ParkedCall } from '../../seams/coordination.js'
import type { JournalEvent } from '../../seams/journal.js'
import { applyDecision, askAndApply } from './approval.js'
import { checkAbort, parseArguments } from './arguments.js'
import { checkGeneration, checkStillLive } from './generation-check.js'
import { checkGuards } from './guards.js'
import { claimIdempotency } from './idempotency.js'
import { pendingOutcome } from './park.js'
import { attempt, commit, execution } from './runner.js'
import { CallState, type TurnContext } from './state.js'
import { text } from './content.js'
import type { ProgressEvent, ToolCallOutcome } from '../../seams/calls.js'

/** The tool as the turn's generation has it now, and the arguments checked against it again. */
const lookup = [
  ['generation', checkGeneration],
  ['arguments', parseArguments],
] as const

type ToolResultEvent = Extract<JournalEvent, { kind: 'tool/result' }>

/** What follows the decision: the same stages a call admitted in one go runs after its approval. */
const afterDecision = [
  ['abort', checkAbort],
  ['guards', checkGuards],
  ['live', checkStillLive],
  ['idempotency', claimIdempotency],
] as const

/** How long a resume that lost the claim waits between looks for the winner's result. */
const POLL_MS = [10, 25, 50, 100, 200, 400] as const

/**
 * Continues a parked call from its decision, in whatever process holds `ctx` (a turn of the same
 * journal, whose envelope names the parked call's turn). The order, and what makes each step once:
 * 1. a round still waiting for a decision answers `suspended` again (nothing is claimed);
 * 2. the tool is looked up in `ctx`'s generation and the arguments checked again;
 * 3. the round's settle claim is taken (`resume`, `reject`, or `void` when the tool's fingerprint or
 *    source changed): only the winner goes on; every other resume waits for the winner's result;
 * 4. the winner journals the decision (or, for a voided one, asks again: a deferral parks the next
 *    round), then guards, the body and the commit run as for any call, and the `tool/result` is
 *    written at the seq the turn kept for it.
 */
export async function resumeParked(ctx: TurnContext, round: ParkedCall, signal: AbortSignal, fresh?: () => number, onProgress?: (event: ProgressEvent) => void): Promise<ToolCallOutcome> {
  const coordination = ctx.turn.journal.coordination
  if (round.settled !== undefined) return awaitSettled(ctx, round, signal)
  if (round.decision === undefined) return pendingOutcome(round, ctx.generation.number)
  if (round.code !== undefined) {
    if (ctx.resumeCode === undefined) {
      throw new SeamError('INVALID_CALL', `the parked call "${round.callId}" is a Code Mode run; resume it from a root or turn that offers run_code`, { details: { callId: round.callId } })
    }
    return ctx.resumeCode(ctx, round, signal, fresh ?? ctx.nextSeq)
  }
  const state = new CallState(ctx, { callId: round.callId, name: round.name, arguments: round.arguments }, signal)
  state.journaled = true
  state.raw = round.arguments
  state.parked = round
  state.onProgress = onProgress
  const looked = attempt(state, lookup)
  if (looked !== undefined) await looked
  const changed = state.capability !== undefined && (state.capability.fingerprint !== round.fingerprint || state.capability.source !== round.source)
  const kind = state.settled || !changed ? (round.decision.answer === 'rejected' ? 'reject' : 'resume') : 'void'
  const claim = await coordination.settle(round.token, { kind, host: coordination.host, at: Date.now() })
  if (claim === undefined || !claim.won) return awaitSettled(ctx, claim?.call ?? round, signal)
  return continueDecided(state, round, changed)
}

/**
 * A parked call whose settle claim this process won, from its decision on: the decision journaled
 * (or, for a tool that changed, the question asked again), then guards, the body and the commit as
 * for any call. `state` has been looked up (`lookupParked`) and is journaled.
 */
export async function continueDecided(state: CallState, round: Pick<ParkedCall, 'decision' | 'reason' | 'summary'>, changed: boolean): Promise<ToolCallOutcome> {
  if (!state.settled) {
    const decided = changed ? askAndApply(state, round.reason, round.summary) : applyDecision(state, round.decision!.answer, round.reason)
    await decided.catch(() => undefined)
  }
  return runAfterDecision(state)
}

/** A resumed call from its guards on: guards, the body and the commit, as for any call. */
export async function runAfterDecision(state: CallState): Promise<ToolCallOutcome> {
  const admitted = attempt(state, afterDecision)
  if (admitted !== undefined) await admitted
  if (!state.settled) {
    const ran = attempt(state, execution)
    if (ran !== undefined) await ran
  }
  await commit(state)
  return state.outcome!
}

/** Looks a parked call's tool up in the state's generation and checks its arguments again (`resumeParked`'s step 2). */
export async function lookupParked(state: CallState): Promise<void> {
  const looked = attempt(state, lookup)
  if (looked !== undefined) await looked
}

/**
 * The refusal of a resume by someone the parked call does not belong to: it names no more than the
 * call id the asker already holds a token for, so it leaks nothing of the call or its result.
 */
export function notYours(callId: string): SeamError {
  return new SeamError('APPROVAL_FORBIDDEN', `the parked call "${callId}" belongs to another caller; nothing ran`, {
    details: { callId },
    hint: 'a turn resumes only its own session, principal and owner\'s calls; root.resume(token, { principal }) takes the call\'s principal or an operator',
  })
}

/** Whether a turn may resume `round`: it is the parked call's own session, principal and owner. */
export function ownsRound(turn: { readonly session: string; readonly principal: { readonly subjectId: string }; readonly owner: string }, round: ParkedCall): boolean {
  return turn.session === round.session && turn.principal.subjectId === round.subjectId && turn.owner === round.owner
}

/** The seqs a parked Code Mode run's turn kept for its settlement, handed out in order; no more (its replay takes fresh ones itself). */
export function reservedSeqs(round: ParkedCall): () => number {
  const seqs = [round.decidedSeq, round.resultSeq]
  return () => {
    const seq = seqs.shift()
    if (seq === undefined) throw new SeamError('INVALID_CALL', `the resume of call "${round.callId}" has no seq left in turn ${round.turnId}`)
    return seq
  }
}

/**
 * The seqs a resumed parked call writes at: its decision at the seq its turn kept for it, then
 * `fresh` ones for whatever its body writes (a question, a nested call); its `tool/result` goes to
 * the other kept seq (`TurnContext.keptResult`).
 */
export function resumeSeqs(round: ParkedCall, fresh: () => number): () => number {
  let decided = false
  return () => {
    if (decided) return fresh()
    decided = true
    return round.decidedSeq
  }
}

/**
 * Another process settles (or has settled) this call: wait for its `tool/result` and return it, or
 * the next round's `suspended` outcome if the winner asked again and it was deferred.
 */
export async function awaitSettled(ctx: TurnContext, round: ParkedCall, signal: AbortSignal): Promise<ToolCallOutcome> {
  const { journal } = ctx.turn
  for (let attempt = 0; ; attempt += 1) {
    const events = await journal.read(round.turnId)
    const result = events.find((event): event is ToolResultEvent => event.kind === 'tool/result' && event.callId === round.callId)
    if (result !== undefined) return replayedOutcome(result, round, ctx.generation.number)
    const waiting = await journal.coordination.parked({ turnId: round.turnId, callId: round.callId })
    if (waiting.length > 0) return pendingOutcome(waiting.at(-1)!, ctx.generation.number)
    if (signal.aborted) {
      return Object.freeze({
        callId: round.callId,
        name: round.name,
        generation: ctx.generation.number,
        status: 'cancelled',
        code: 'ABORTED',
        content: Object.freeze(text(`Stopped waiting for the result of "${round.name}", which another process is running.`)),
        durationMs: 0,
      })
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS[Math.min(attempt, POLL_MS.length - 1)]))
  }
}

/** A journaled `tool/result` as an outcome: what another process's run of the call produced. */
export function replayedOutcome(result: ToolResultEvent, round: Pick<ParkedCall, 'callId' | 'name'>, generation: number): ToolCallOutcome {
  return Object.freeze({
    callId: round.callId,
    name: round.name,
    generation,
    status: result.status,
    ...(result.code === undefined ? {} : { code: result.code }),
    ...(result.policy === undefined ? {} : { policy: result.policy }),
    content: Object.freeze(result.content.map((block) => Object.freeze({ ...block }))),
    durationMs: result.durationMs,
    replayed: true,
  })
}

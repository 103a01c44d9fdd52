import type { ToolCall, ToolCallOutcome } from '../../seams/calls.js'
import { runCall } from './runner.js'
import { CallState, type TurnContext } from './state.js'
import { settle } from './settle.js'

/**
 * A nested call of `outer` (a tool body's `ctx.tools.call`, a Code Mode sub-call), start to finish:
 * 1. its id is `<outer callId>/<n>`, n counting the outer call's nested calls from 1, so a rerun of
 *    the same body asks for the same ids;
 * 2. it is a call of the outer call's turn, in its generation, seeing only the turn's tools (a tool
 *    the turn cannot see is `UNKNOWN_TOOL`), and runs the whole pipeline, journaled as its own
 *    `tool/call` + `tool/result` pair whose `parent` is the outer call id;
 * 3. past `maxNesting` it is journaled and settles `NESTED_CALL_DEPTH` without running anything;
 * 4. contexts it defers join the outer call's own: delivered after the outer call commits, dropped
 *    with them by an outer post-execute block.
 * `signal` is the outer body's (fused with the nested call's own, if given). A Code Mode run names
 * its sub-calls by their place in the program (`n`), and a resumed one gives them the seqs of its
 * turn nothing else has taken (`ctx`).
 */
export function nestedCall(
  outer: CallState,
  name: string,
  args: ToolCall['arguments'] | undefined,
  signal: AbortSignal,
  options?: { readonly n?: number; readonly ctx?: TurnContext },
): { state: CallState; call: ToolCall } {
  const call: ToolCall = {
    callId: `${outer.call.callId}/${options?.n ?? outer.nextNested()}`,
    name,
    arguments: args ?? {},
    ...(outer.exec === undefined ? {} : { parent: outer.exec.token }),
    ...(outer.call.trace === undefined ? {} : { trace: outer.call.trace }),
  }
  const state = new CallState(options?.ctx ?? outer.ctx, call, signal, outer)
  const { maxNesting } = outer.ctx.limits
  if (state.depth > maxNesting) {
    settle(state, {
      status: 'failed',
      code: 'NESTED_CALL_DEPTH',
      message: `The call to "${name}" was not run: tools calling tools may nest ${maxNesting} deep, and this call is one deeper.`,
      details: { depth: state.depth, maxNesting },
    })
  }
  return { state, call }
}

/** Runs a nested call made by `nestedCall`; resolves with its outcome (never rejects). */
export function runNested(state: CallState): Promise<ToolCallOutcome> {
  return runCall(state, finishNested)
}

function finishNested(state: CallState): ToolCallOutcome {
  const outcome = state.outcome!
  const outer = state.parent
  if (outer !== undefined && outcome.contexts !== undefined && outcome.contexts.length > 0) {
    outer.toolContexts ??= []
    outer.toolContexts.push(...outcome.contexts)
  }
  return outcome
}

import { checkApproval } from './approval.js'
import { checkAbort, parseArguments } from './arguments.js'
import { dispatch } from './dispatch.js'
import { checkGeneration } from './generation-check.js'
import { checkGuards } from './guards.js'
import { journalCall } from './journal-call.js'
import { journalResult } from './journal-result.js'
import { normalize } from './normalize.js'
import { observe } from './observe.js'
import { checkPermission } from './permission.js'
import { postExecute } from './post-execute.js'
import type { CallState } from './state.js'

type Stage = (state: CallState) => void | Promise<void> | undefined

/**
 * The pipeline as named stages in run order. Admission runs in model order (one lane in a batch);
 * dispatch may overlap; commit runs in model order. A stage that settles the call skips the rest
 * of admission and dispatch; commit always runs, so every call ends with exactly one outcome.
 */
export const admission = [
  ['tool/call', journalCall],
  ['generation', checkGeneration],
  ['arguments', parseArguments],
  ['abort', checkAbort],
  ['permission', checkPermission],
  ['approval', checkApproval],
  ['guards', checkGuards],
  ['abort', checkAbort],
] as const satisfies readonly (readonly [string, Stage])[]

export const execution = [['execute', dispatch]] as const satisfies readonly (readonly [string, Stage])[]

export const commitment = [
  ['post-execute', postExecute],
  ['normalize', normalize],
  ['tools/result', observe],
  ['tool/result', journalResult],
] as const satisfies readonly (readonly [string, Stage])[]

/**
 * Runs `stages` in order until one settles the call (or all of them, with `always`). Returns
 * `undefined` when every stage finished synchronously: no promise, no microtask hop on the hot path.
 */
export function runStages(
  state: CallState,
  stages: readonly (readonly [string, Stage])[],
  always = false,
  from = 0,
): Promise<void> | undefined {
  // An index loop: destructuring `for (const [, stage] of stages)` allocates iterators per call.
  for (let index = from; index < stages.length; index += 1) {
    if (!always && state.settled) return undefined
    const pending = stages[index]![1](state)
    if (pending !== undefined) return pending.then(() => runStages(state, stages, always, index + 1))
  }
  return undefined
}

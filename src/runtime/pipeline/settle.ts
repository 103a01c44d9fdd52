/** How a stage settles its call: the first settlement wins, and a policy denial yields to the caller's abort. */
import type { CallState } from './state.js'
import { notStarted, type Settlement } from './settlement.js'

export function settle(state: CallState, settlement: Settlement): void {
  state.settled ??= settlement
}

/**
 * A policy denial (permission, hook, approval, guard), unless the caller aborted while the policy
 * was deciding: a pre-dispatch abort outranks a policy outcome (DESIGN.md §5).
 */
export function deny(state: CallState, settlement: Settlement): void {
  settle(state, state.signal.aborted ? notStarted(state.call.name) : settlement)
}

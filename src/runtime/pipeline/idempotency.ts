import { createHash } from 'node:crypto'
import { messageOf } from '../../errors.js'
import type { KeyClaim, KeyHolder, StoredResult } from '../../seams/coordination.js'
import type { JournalEvent } from '../../seams/journal.js'
import { sameHolder } from '../../seams/coordination.js'
import type { CallState } from './state.js'
import { settle } from './settle.js'
import { notStarted, type Settlement } from './settlement.js'
import type { ToolCallOutcome } from '../../seams/calls.js'

/** How long a call waits between looks at a key another call holds. */
const POLL_MS = [2, 5, 10, 25, 50, 100, 200] as const

/**
 * Idempotent calls, as two stages around the body. The rule:
 * - a call has a key when its tool declares one and it gives a non-empty string for the arguments
 *   (a key function that throws fails the call: it never runs unguarded);
 * - the key, qualified by its scope (session and principal, principal, or global) and the tool's
 *   name, is claimed in the journal: the first call to insert it holds it, in any process;
 * - a key that holds a completed result replays it: the call completes with that value and content
 *   (`replayed: true`) and its body does not run;
 * - a call that finds the key held by a call still running waits for its result; if that call
 *   ends without completing, the key is released and the next waiter claims it and runs;
 * - a holder that ended `OUTCOME_UNKNOWN` (crash repair closed it: its process died while it held
 *   the key, so its body may have run) keeps the key: the next call settles
 *   `PRIOR_OUTCOME_UNKNOWN` without running, unless its tool says `onUnknown: 'rerun'`, when it
 *   releases the dead holder's claim and claims the key itself (one conditional write each, so of
 *   several such calls one runs);
 * - once normalized, the holder stores its completed result with the key before its `tool/result`
 *   (a crash in between still replays what completed), or releases the key.
 */
export function claimIdempotency(state: CallState): Promise<void> | undefined {
  if (state.capability?.idempotencyScope === undefined || !state.args) return undefined
  let key: string | undefined
  try {
    key = keyOf(state)
  } catch (error) {
    settle(state, {
      status: 'failed',
      code: 'TOOL_ERROR',
      message: `The call to "${state.call.name}" was not run: its idempotency key could not be computed (${messageOf(error)}).`,
    })
    return undefined
  }
  return key === undefined ? undefined : claim(state, key)
}

/** After normalize: the holder stores a completed result with its key, or releases the key. */
export function settleIdempotency(state: CallState): Promise<void> | undefined {
  const key = state.heldKey
  const outcome = state.outcome
  if (key === undefined || outcome === undefined) return undefined
  state.heldKey = undefined
  return storeKeyResult(state, key, outcome)
}

/**
 * Completes (or, for a call that did not complete, releases) the key the call held. Its own
 * function: closures over the key and its holder inside `settleIdempotency` made every call
 * allocate a context for them, though most calls hold no key.
 */
function storeKeyResult(state: CallState, key: string, outcome: ToolCallOutcome): Promise<void> {
  const coordination = state.ctx.turn.journal.coordination
  const holder = holderOf(state)
  if (outcome.status !== 'completed') return coordination.releaseKey(key, holder).catch(() => undefined)
  const result: StoredResult = { content: outcome.content, ...(outcome.value === undefined ? {} : { value: outcome.value }) }
  // If the result cannot be stored, free the key rather than leave waiters on it.
  return coordination.completeKey(key, holder, result).catch(() => coordination.releaseKey(key, holder).catch(() => undefined))
}

async function claim(state: CallState, key: string): Promise<void> {
  const { journal } = state.ctx.turn
  const holder = holderOf(state)
  for (let attempt = 0; ; attempt += 1) {
    let held: KeyClaim
    try {
      held = await journal.coordination.claimKey(key, holder)
    } catch (error) {
      settle(state, {
        status: 'failed',
        code: 'JOURNAL_UNAVAILABLE',
        message: `The call to "${state.call.name}" was not run because its idempotency key could not be claimed in the journal.`,
        details: { error: messageOf(error) },
      })
      return
    }
    if (held.result !== undefined) return replay(state, held.result)
    if (sameHolder(held, holder)) {
      state.heldKey = key
      return
    }
    if (state.signal.aborted) return settle(state, notStarted(state.call.name))
    const ended = attempt >= 3 ? await holderEnd(state, held) : 'running'
    if (ended === 'unknown' && state.capability?.onUnknown !== 'rerun') return settle(state, priorUnknown(state, held))
    // A holder that already has a `tool/result` ended without storing one with the key (its
    // journal write failed), or ended unknown and this tool reruns: free the key for the next claim.
    if (ended !== 'running') await journal.coordination.releaseKey(key, held).catch(() => undefined)
    if (ended !== 'unknown') await new Promise((resolve) => setTimeout(resolve, POLL_MS[Math.min(attempt, POLL_MS.length - 1)]))
  }
}

function priorUnknown(state: CallState, held: KeyClaim): Settlement {
  return {
    status: 'failed',
    code: 'PRIOR_OUTCOME_UNKNOWN',
    message:
      `The call to "${state.call.name}" was not run: an earlier call with the same idempotency key (call "${held.callId}") ` +
      'was cut off by a crash before it settled, so it may or may not have run. Check whether it took effect before asking for it again.',
    details: { priorCallId: held.callId, priorTurnId: held.turnId },
  }
}

function replay(state: CallState, result: StoredResult): void {
  state.replayed = true
  state.content = result.content.map((block) => ({ ...block }))
  if ('value' in result) {
    state.value = result.value
    state.hasValue = true
  }
}

/**
 * Whether the call holding a key is still running, ended (with a `tool/result`), or ended unknown:
 * closed `OUTCOME_UNKNOWN` by crash repair, or gone from the journal (its turn evicted), so nothing
 * says whether it ran.
 */
async function holderEnd(state: CallState, held: KeyClaim): Promise<'running' | 'ended' | 'unknown'> {
  let events: readonly JournalEvent[]
  try {
    events = await state.ctx.turn.journal.read(held.turnId)
  } catch {
    return 'running'
  }
  let called = false
  for (const event of events) {
    if (!('callId' in event) || event.callId !== held.callId) continue
    if (event.kind === 'tool/result') return event.code === 'OUTCOME_UNKNOWN' ? 'unknown' : 'ended'
    if (event.kind === 'tool/call') called = true
  }
  return called ? 'running' : 'unknown'
}

/**
 * What a body gets as `ctx.idempotencyKey`: a digest of the key qualified by scope and tool name
 * (which names the session and principal, not for an external system to see), 43 characters.
 */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('base64url')
}

function holderOf(state: CallState): KeyHolder {
  return { turnId: state.ctx.turn.turnId, callId: state.call.callId, host: state.ctx.turn.journal.coordination.host }
}

/** The key qualified by scope and tool name, or `undefined` when the call has none. */
function keyOf(state: CallState): string | undefined {
  const { capability, binding, args, ctx } = state
  if (!capability || !binding || !args) return undefined
  let key: unknown
  if (binding.kind === 'feature') {
    const { slot, plan } = binding
    key = plan.idempotencyKey?.call(plan.definition, args as never, {
      turn: ctx.turn,
      owner: slot.owner,
      callId: state.call.callId,
      use: (token) => slot.plugin.resources.use(token),
    })
    if (key !== undefined && typeof key !== 'string') throw new Error(`idempotencyKey returned ${typeof key}, not a string`)
  } else {
    key = JSON.stringify((capability.idempotencyKey ?? []).map((name) => args[name] ?? null))
  }
  if (key === undefined || key === '') return undefined
  const { session, principal } = ctx.turn
  const scope =
    capability.idempotencyScope === 'global' ? ['global'] : capability.idempotencyScope === 'principal' ? ['principal', principal.subjectId] : ['session', session, principal.subjectId]
  return JSON.stringify([...scope, capability.name, key])
}

/**
 * A call's outcome, and what a body calls other tools with: apart from `calls.ts`, because the
 * provider contract (`types.ts`) names them and `calls.ts` names the turn envelope of `types.ts`.
 */
import type { OutcomeCode } from '../errors.js'
import type { ContentBlock, DenialPolicy, OutcomeStatus } from './journal.js'

/** A context message a tool defers until its batch has committed every result. */
export interface DeferredContext {
  readonly id: string
  readonly role: 'user' | 'system'
  readonly content: string
}

/** The one authoritative result of one call. Frozen. */
export interface ToolCallOutcome {
  readonly callId: string
  readonly name: string
  readonly generation: number
  /** `suspended` is not final: the call is parked (`APPROVAL_PENDING`) and has no `tool/result` yet. */
  readonly status: OutcomeStatus | 'suspended'
  readonly code?: OutcomeCode
  readonly policy?: DenialPolicy
  readonly reason?: string
  readonly value?: unknown
  readonly content: readonly ContentBlock[]
  readonly contexts?: readonly DeferredContext[]
  /** Structured failure detail (field paths, the tool file and line of a throw). */
  readonly details?: Readonly<Record<string, unknown>>
  readonly durationMs: number
  /** For a `suspended` call: give it to `turn.tools.resume` or `root.resume` once it is decided. */
  readonly resumeToken?: string
  /** The result was read from the journal, not produced by this call (an idempotency key's, or a resume another host ran). */
  readonly replayed?: boolean
}

/**
 * What a tool body calls other tools with (`ctx.tools`). A nested call is a call of the same turn
 * with the id `<outer callId>/<n>`: it runs the whole pipeline (visibility, arguments, permission,
 * approval, guards, wrappers, post-execute, journal) and settles with its own outcome, which is
 * returned, never thrown. The model sees only the outer call.
 */
export interface NestedTools {
  /**
   * Calls `name` with `args` (an object, or JSON text); `signal` cancels this call only (the outer
   * call's signal applies too). Past the nesting bound it settles `NESTED_CALL_DEPTH` and runs nothing.
   */
  call(name: string, args?: Readonly<Record<string, unknown>> | string, options?: { readonly signal?: AbortSignal }): Promise<ToolCallOutcome>
}

/**
 * The runtime's limits (`RuntimeLimits`), their defaults, and how given ones are checked and laid
 * over the defaults (`resolveLimits`), once per root and per turn.
 */
import { SeamError } from '../../errors.js'
import { MAX_TIMER_MS } from '../base/deadlines.js'

/** Resolved runtime limits, in milliseconds (`maxParallel` counts calls). */
export interface RuntimeLimits {
  /** A body's deadline (a tool's own `timeoutMs` wins). */
  readonly timeoutMs: number
  /** How long a body may outlive its deadline or an abort before it is abandoned. */
  readonly graceMs: number
  /** How long a person has to answer an approval prompt. */
  readonly approvalTimeoutMs: number
  /** The deadline of each policy stage: permission host, hooks, `risk()`, guards, post hooks. */
  readonly policyTimeoutMs: number
  /** The deadline of each journal write a call waits for. */
  readonly journalTimeoutMs: number
  readonly maxParallel: number
  /** How long a parked call waits for a decision and its resume before it settles `APPROVAL_TIMEOUT`. */
  readonly approvalTtlMs: number
  /** How deep nested calls may go: a model's call is at depth 0, its nested calls at 1 (default 4). */
  readonly maxNesting: number
}

export const DEFAULT_LIMITS: RuntimeLimits = Object.freeze({
  timeoutMs: 30_000,
  graceMs: 2_000,
  approvalTimeoutMs: 300_000,
  policyTimeoutMs: 10_000,
  journalTimeoutMs: 10_000,
  maxParallel: 8,
  approvalTtlMs: 86_400_000,
  maxNesting: 4,
})

/**
 * `DEFAULT_LIMITS` with the given ones over them. Each given limit must be a whole number from 1 up
 * to what a timer can wait (2^31 - 1); `undefined` keeps the default. A `NaN` `maxParallel` would
 * otherwise lift the batch bound, and a longer timeout would fire at once.
 */
export function resolveLimits(given: Partial<RuntimeLimits> | undefined): RuntimeLimits {
  // A root resolves its limits once and hands the same object to every turn.
  if (given !== undefined && resolved.has(given)) return given as RuntimeLimits
  const limits: Record<string, number> = { ...DEFAULT_LIMITS }
  for (const [key, value] of Object.entries(given ?? {})) {
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value < 1 || value > MAX_TIMER_MS) {
      throw new SeamError('INVALID_OPTIONS', `limit \`${key}\` must be a whole number from 1 to ${MAX_TIMER_MS}, got ${String(value)}`)
    }
    limits[key] = value
  }
  const frozen = Object.freeze(limits) as unknown as RuntimeLimits
  resolved.add(frozen)
  return frozen
}

const resolved = new WeakSet<object>([DEFAULT_LIMITS])

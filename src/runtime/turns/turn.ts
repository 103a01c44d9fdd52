import { SeamError } from '../../errors.js'
import type { DeferredContext } from '../../seams/calls.js'
import { TIMED_OUT, untilDue } from '../base/abort.js'
import type { Activity } from '../base/activity.js'
import type { ApprovalGrants } from '../approvals/approval.js'
import type { ApprovalPort } from '../../seams/approval.js'
import type { CapabilityIngress } from '../generations/capability-ingress.js'
import type { AgentCapabilities } from '../../seams/capabilities.js'
import type { ParkedCall } from '../../seams/coordination.js'
import type { ProgressEvent, ToolCallOutcome } from '../../seams/calls.js'
import type { Generation } from '../generations/generation.js'
import type { Instrumentation, TurnProbe } from '../generations/instrumentation.js'
import { APPENDED } from '../journal/events.js'
import type { JournalStore } from '../../seams/journal.js'
import type { AbandonedCall } from '../pipeline/abandoned-call.js'
import type { RuntimeLimits } from '../pipeline/limits.js'
import { TurnToolRuntime } from './turn-tool-runtime.js'
import { NEVER_ABORTED } from '../base/abort.js'
import type { TurnEnvelope } from '../../seams/types.js'
import { createTurnIngress, type TurnIngressInput } from './turn-ingress.js'
import { type CodeMode, resumeCode } from '../code/run-code.js'

export interface BeginTurnInput extends Omit<TurnIngressInput, 'journal' | 'signal' | 'session' | 'principal'> {
  session: string
  principal: { subjectId: string; roles?: readonly string[] }
  signal?: AbortSignal
  /** Called after each `execute`/`executeBatch` commits, with the deferred contexts in model order. */
  onContexts?: (contexts: readonly DeferredContext[]) => void
  /** Offer the built-in `run_code` tool in this turn (default: the root's `codeMode`). */
  codeMode?: boolean
}

/** What a root lends every turn it begins (one object per root). */
export interface TurnHost {
  /** The root's Code Mode: whether turns get `run_code`, and the sandbox it runs in. */
  readonly code: CodeMode
  readonly journal: JournalStore
  readonly ingress: CapabilityIngress
  readonly grants: ApprovalGrants
  readonly limits: RuntimeLimits
  /** Counts the turn's calls in flight with the root's others (for `close()`). */
  readonly activity: Activity
  readonly telemetry: Instrumentation | undefined
  /** The root's approval port, for interactive turns that bring none. */
  readonly approval: ApprovalPort | undefined
  readonly onAbandoned: (call: AbandonedCall) => void
  /** Told of every call's progress (the root's `progress` event). */
  readonly onProgress: (event: ProgressEvent) => void
  readonly locate: (error: unknown) => Record<string, unknown> | undefined
  /** Told when a turn begins to end: the root no longer counts it as open. */
  readonly forget: (turn: Turn) => void
}

/**
 * One agent turn, leased on the generation it began in: it sees that generation's frozen
 * capabilities and runs its tools until `end()`, whatever is published meanwhile.
 */
export class Turn {
  readonly envelope: TurnEnvelope
  readonly capabilities: AgentCapabilities
  readonly tools: TurnToolRuntime
  readonly #generation: Generation
  readonly #end: () => Promise<void>
  #ended: Promise<void> | undefined

  constructor(parts: { envelope: TurnEnvelope; generation: Generation; capabilities: AgentCapabilities; tools: TurnToolRuntime; end: () => Promise<void> }) {
    this.envelope = parts.envelope
    this.capabilities = parts.capabilities
    this.tools = parts.tools
    this.#generation = parts.generation
    this.#end = parts.end
  }

  get turnId(): string {
    return this.envelope.turnId
  }

  /** The number of the generation this turn is leased on. */
  get generation(): number {
    return this.#generation.number
  }

  get ended(): boolean {
    return this.#ended !== undefined
  }

  /**
   * Refuses new calls (`TURN_ENDED`), lets the calls in flight settle and journal their results
   * (each within its deadlines), then journals `turn/end` and releases the lease. Idempotent.
   */
  end(): Promise<void> {
    this.#ended ??= this.#end()
    return this.#ended
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.end()
  }
}

/**
 * Projects what the turn sees, journals `turn/begin` and makes the turn, leased on `generation`
 * (`release` ends the lease when the turn has ended; the caller releases it if this throws).
 */
export async function openTurn(host: TurnHost, generation: Generation, input: BeginTurnInput, release: () => void): Promise<Turn> {
  const { journal, limits } = host
  const approval = input.ports?.approval ?? (input.unattended ? undefined : host.approval)
  const { codeMode, ...rest } = input
  if (codeMode !== undefined && typeof codeMode !== 'boolean') throw new SeamError('INVALID_TURN', '`codeMode` must be true or false')
  const envelope = createTurnIngress({ ...rest, signal: input.signal ?? NEVER_ABORTED, ports: { ...input.ports, approval }, journal })
  const capabilities = host.code.offer(await host.ingress.read(generation, envelope.owner, envelope), generation, codeMode ?? host.code.enabled)
  let seq = 0
  let ended = false
  // Made when a question first needs it (see `TurnToolRuntimeOptions.endSignal`).
  let ending: AbortController | undefined
  const endSignal = (): AbortSignal => {
    if (ending === undefined) {
      ending = new AbortController()
      if (ended) ending.abort()
    }
    return ending.signal
  }
  const nextSeq = () => ++seq
  const begun = journal.append({ kind: 'turn/begin', turnId: envelope.turnId, seq: nextSeq(), at: Date.now(), session: envelope.session, subjectId: envelope.principal.subjectId, generation: generation.number, owner: envelope.owner })
  // Already stored (the memory journal): nothing to wait for.
  if (begun !== APPENDED && (await untilDue(begun, undefined, limits.journalTimeoutMs)) === TIMED_OUT) {
    throw new SeamError('JOURNAL_UNAVAILABLE', `the journal did not record the turn's beginning within ${limits.journalTimeoutMs} ms`)
  }
  const probe = host.telemetry?.turn(envelope, generation.number)
  const tools = new TurnToolRuntime({
    ingress: host.ingress,
    grants: host.grants,
    limits,
    onAbandoned: host.onAbandoned,
    onProgress: host.onProgress,
    locate: host.locate,
    turn: envelope,
    generation,
    capabilities,
    ended: () => ended,
    endSignal,
    nextSeq,
    unusedSeq: (taken) => {
      if (taken === seq) seq -= 1
    },
    activity: host.activity,
    onContexts: input.onContexts,
    probe,
    resumeCode,
  })
  const turn: Turn = new Turn({
    envelope,
    generation,
    capabilities,
    tools,
    end: async () => {
      ended = true
      ending?.abort()
      host.forget(turn)
      try {
        // turn/end is the turn's last event: calls in flight settle and journal their results
        // first, each within its own deadlines (a body past timeoutMs + graceMs is settled as
        // TOOL_TIMEOUT and abandoned; a call that has not reached its body settles as
        // GENERATION_RETIRED, an open approval question withdrawn). Aborting the turn's signal
        // ends running bodies sooner.
        await tools.idle()
        // A stalled journal cannot hold the end (or close) up: crash repair marks the turn interrupted.
        // A fenced host's end is refused: the host that fenced it already closed the turn as interrupted.
        const appended = journal.append({ kind: 'turn/end', turnId: envelope.turnId, seq: nextSeq(), at: Date.now(), reason: 'ended' })
        await untilDue(appended, undefined, limits.journalTimeoutMs).catch(unlessFenced)
      } finally {
        release()
        probe?.ended('ended')
      }
    },
  })
  return turn
}

/**
 * Continues the parked call `round` in `generation`, under the parked call's own turn id, with the
 * host's approval port, and resolves like `turn.tools.resume`. `release` ends the generation lease
 * once the call has settled (a body abandoned past its deadline keeps it until it settles).
 */
export async function resumeParked(host: TurnHost, generation: Generation, round: ParkedCall, signal: AbortSignal | undefined, release: () => void): Promise<ToolCallOutcome> {
  let tools: TurnToolRuntime | undefined
  let probe: TurnProbe | undefined
  try {
    const envelope = createTurnIngress({
      turnId: round.turnId,
      session: round.session,
      principal: { subjectId: round.subjectId, roles: round.roles },
      origin: round.origin,
      owner: round.owner,
      signal: signal ?? NEVER_ABORTED,
      ports: { approval: host.approval },
      journal: host.journal,
    })
    // A parked Code Mode run resumes with `run_code` offered, whatever the root's default.
    const capabilities = host.code.offer(await host.ingress.read(generation, envelope.owner, envelope), generation, round.code !== undefined || host.code.enabled)
    // Traced as a turn of its own under the parked call's turn id: the turn that parked it has ended.
    probe = host.telemetry?.turn(envelope, generation.number)
    const { ingress, grants, limits, onAbandoned, onProgress, locate } = host
    tools = new TurnToolRuntime({ ingress, grants, limits, onAbandoned, onProgress, locate, turn: envelope, generation, capabilities, probe, resumeCode })
    return await tools.resume(round.token)
  } finally {
    if (tools === undefined) {
      probe?.ended('interrupted')
      release()
    } else {
      const ended = probe
      void tools.idle().then(() => {
        ended?.ended('ended')
        release()
      })
    }
  }
}

/** Rethrows anything but `HOST_FENCED`: a fenced host's turn was already closed by the host that fenced it. */
function unlessFenced(error: unknown): void {
  if (!SeamError.is(error) || error.code !== 'HOST_FENCED') throw error
}

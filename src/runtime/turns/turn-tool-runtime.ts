import { performance } from 'node:perf_hooks'
import { SeamError } from '../../errors.js'
import type { Activity } from '../base/activity.js'
import type { DeferredContext } from '../../seams/calls.js'
import { ApprovalGrants } from '../approvals/approval.js'
import { CapabilityIngress } from '../generations/capability-ingress.js'
import { toolsByName } from '../generations/tool-binding.js'
import type { AgentCapabilities } from '../../seams/capabilities.js'
import type { Generation } from '../generations/generation.js'
import type { TurnProbe } from '../generations/instrumentation.js'
import type { JournalEvent, JournalStore } from '../../seams/journal.js'
import { appendNowOf } from '../journal/memory.js'
import { runCall } from '../pipeline/runner.js'
import { runBatch } from './batch.js'
import { CallState, type NestedCaller, type TurnContext } from '../pipeline/state.js'
import type { AbandonedCall } from '../pipeline/abandoned-call.js'
import { resolveLimits, type RuntimeLimits } from '../pipeline/limits.js'
import { nestedCall, runNested } from '../pipeline/nested.js'
import type { ExecuteOptions, ProgressEvent, ToolCall, ToolCallOutcome } from '../../seams/calls.js'
import { notYours, ownsRound, reservedSeqs, resumeParked, resumeSeqs } from '../pipeline/resume.js'
import type { ParkedCall } from '../../seams/coordination.js'
import { NEVER_ABORTED } from '../base/abort.js'
import type { TurnEnvelope } from '../../seams/types.js'
import { createTurnIngress } from './turn-ingress.js'
import { assertBatch, assertCall, assertListener, assertSignal } from './call-input.js'

export interface TurnToolRuntimeOptions {
  readonly turn: TurnEnvelope
  readonly generation: Generation
  readonly capabilities: AgentCapabilities
  readonly ingress?: CapabilityIngress
  readonly grants?: ApprovalGrants
  readonly limits?: Partial<RuntimeLimits>
  /** Called once per `execute`/`executeBatch`, after every result has committed, in model order. */
  readonly onContexts?: (contexts: readonly DeferredContext[]) => void
  readonly onAbandoned?: (call: AbandonedCall) => void
  /** Told of every call's progress (the root's `progress` event). */
  readonly onProgress?: (event: ProgressEvent) => void
  readonly locate?: (error: unknown) => Record<string, unknown> | undefined
  /**
   * True once the turn has ended: new calls are then refused (`TURN_ENDED`) before anything is
   * journaled; calls already admitted that have not reached their body settle as `GENERATION_RETIRED`.
   */
  readonly ended?: () => boolean
  /**
   * Aborted when the turn ends; withdraws open approval questions (see `ended`). Or a function that
   * makes that signal when a question first needs it (aborted already if the turn has ended): an
   * `AbortSignal` costs microseconds to create on Node 20, and most turns ask nothing.
   */
  readonly endSignal?: AbortSignal | (() => AbortSignal)
  readonly nextSeq?: () => number
  /**
   * Gives back the seq `nextSeq` gave last, when nothing was written at it (a call id the turn had
   * used already). With it, a memory journal's own uniqueness rule claims call ids, with no set of
   * the turn's ids beside it.
   */
  readonly unusedSeq?: (seq: number) => void
  /** Counts this runtime's work in flight with others' (the root's, for `close()`). */
  readonly activity?: Activity
  /** Told of each call and journal append of this turn (see `Instrumentation`). */
  readonly probe?: TurnProbe
  /** Resumes a parked Code Mode run (see `TurnContext.resumeCode`). */
  readonly resumeCode?: TurnContext['resumeCode']
}

/**
 * The only thing that executes a projected tool; one instance per turn. Every accepted call
 * settles with exactly one frozen `ToolCallOutcome` and one durable `tool/result` paired with its
 * `tool/call`. Outcomes are returned, never thrown; only caller misuse throws (`INVALID_CALL`).
 */
export class TurnToolRuntime {
  readonly #ctx: TurnContext
  readonly #onContexts: ((contexts: readonly DeferredContext[]) => void) | undefined
  #active = 0
  #idle: { promise: Promise<void>; resolve: () => void } | undefined
  readonly #activity: Activity | undefined
  /** The turn's seqs come from its owner (`nextSeq`): this runtime is the turn's own, live one. */
  readonly #liveSeqs: boolean

  constructor(options: TurnToolRuntimeOptions) {
    const { turn, generation, capabilities } = options
    if (capabilities.generation !== generation.number) {
      throw new SeamError('INVALID_CALL', 'the capabilities were not projected from this generation')
    }
    let seq = 1
    const journal = turn.journal
    const unusedSeq =
      options.nextSeq === undefined
        ? (taken: number) => {
            if (taken === seq) seq -= 1
          }
        : options.unusedSeq
    const probe = options.probe
    this.#onContexts = options.onContexts
    this.#activity = options.activity
    this.#liveSeqs = options.nextSeq !== undefined
    this.#ctx = {
      turn,
      generation,
      tools: toolsByName(capabilities, generation),
      ingress: options.ingress ?? new CapabilityIngress(),
      grants: options.grants ?? new ApprovalGrants(journal.coordination),
      limits: resolveLimits(options.limits),
      ended: options.ended ?? (() => false),
      endSignal: lazySignal(options.endSignal),
      nextSeq: options.nextSeq ?? (() => ++seq),
      callIds: new Set(),
      append: probe?.appended ? timedAppend(journal, probe) : (event: JournalEvent) => journal.append(event),
      // A seq taken for a refused call id is given back: without a way to, ids are claimed in `callIds`.
      appendNow: probe?.appended || unusedSeq === undefined ? undefined : appendNowOf(journal),
      unusedSeq,
      lease: () => generation.lease(),
      onAbandoned: options.onAbandoned ?? (() => {}),
      progress: options.onProgress,
      locate: options.locate ?? (() => undefined),
      probe,
      callNested: this.#callNested,
      resumeCode: options.resumeCode,
    }
  }

  /** A body's nested call: counted as this runtime's work until it settles (`idle`, `turn.end()`). */
  readonly #callNested: NestedCaller = (outer, name, args, signal) => {
    this.#active += 1
    this.#activity?.begin()
    const { state } = nestedCall(outer, name, args, signal)
    return runNested(state).finally(() => this.#done())
  }

  /**
   * Runs one call through the whole pipeline; `signal` cancels this call only (the turn's still
   * applies). A call id the turn already used settles as `DUPLICATE_CALL` without running or
   * journaling anything; after the turn ended, the call is refused (`TURN_ENDED`).
   */
  execute(call: ToolCall, options?: ExecuteOptions): Promise<ToolCallOutcome> {
    const own = options?.signal
    try {
      assertCall(call)
      assertSignal(own, 'execute')
      assertListener(options?.onProgress, 'execute')
      this.#assertOpen()
    } catch (error) {
      return Promise.reject(error)
    }
    const signal = this.#signal(own)
    // A signal other than the turn's belongs to this call alone (its own, or the two fused for it):
    // the run listens to it directly and removes its listener when it ends.
    return this.#execute(call, signal, signal !== this.#ctx.turn.signal, options?.onProgress)
  }

  /** The turn's signal with a call's or batch's own, fused only when both can abort. */
  #signal(extra: AbortSignal | undefined): AbortSignal {
    const turnSignal = this.#ctx.turn.signal
    if (extra === undefined || extra === turnSignal) return turnSignal
    if (turnSignal === NEVER_ABORTED) return extra
    return AbortSignal.any([turnSignal, extra])
  }

  /**
   * Continues a parked call (a `suspended` outcome's `resumeToken`) in this turn's generation, and
   * resolves with its outcome: `suspended` again while no one has decided, the call's one result
   * once it is (guards run again, the body at most once across every process on the journal, the
   * result journaled in the parked call's own turn). A resume another process won resolves with
   * that process's result (`replayed: true`). An unknown token throws `UNKNOWN_APPROVAL`; a call
   * parked by another session, principal or owner throws `APPROVAL_FORBIDDEN` and nothing runs.
   */
  async resume(token: string, options?: ExecuteOptions): Promise<ToolCallOutcome> {
    if (typeof token !== 'string' || token === '') throw new SeamError('INVALID_CALL', 'resume needs a resume token')
    assertSignal(options?.signal, 'resume')
    assertListener(options?.onProgress, 'resume')
    const journal = this.#ctx.turn.journal
    const [round] = await journal.coordination.parked({ token, settled: true })
    if (round === undefined) {
      throw new SeamError('UNKNOWN_APPROVAL', `no parked call has the resume token "${token}"`, { details: { token } })
    }
    if (!ownsRound(this.#ctx.turn, round)) throw notYours(round.callId)
    this.#active += 1
    this.#activity?.begin()
    try {
      // A resume writes more than the two seqs its turn kept (a Code Mode run's replay, a body's
      // questions): in its own live turn it takes the turn's next ones, else the ones after
      // everything its turn holds.
      const fresh = this.#liveSeqs && this.#ctx.turn.turnId === round.turnId ? this.#ctx.nextSeq : await freshSeqs(journal, round.turnId)
      return await resumeParked(this.#resumeContext(round, fresh), round, this.#signal(options?.signal), round.code === undefined ? undefined : fresh, options?.onProgress)
    } finally {
      this.#done()
    }
  }

  /** This turn's context, but acting for the parked call's turn and writing at the seqs it kept. */
  #resumeContext(round: ParkedCall, fresh: () => number): TurnContext {
    const base = this.#ctx
    const turn =
      base.turn.turnId === round.turnId
        ? base.turn
        : createTurnIngress({
            turnId: round.turnId,
            session: round.session,
            principal: { subjectId: round.subjectId, roles: round.roles },
            origin: round.origin,
            owner: round.owner,
            unattended: base.turn.unattended,
            policy: base.turn.policy,
            signal: base.turn.signal,
            ports: base.turn.ports,
            journal: base.turn.journal,
          })
    if (round.code !== undefined) return { ...base, turn, nextSeq: reservedSeqs(round) }
    return { ...base, turn, nextSeq: resumeSeqs(round, fresh), keptResult: { callId: round.callId, seq: round.resultSeq } }
  }

  /** Resolves when no `execute`/`executeBatch` of this runtime is running. */
  idle(): Promise<void> {
    if (this.#active === 0) return Promise.resolve()
    this.#idle ??= withResolvers()
    return this.#idle.promise
  }

  #execute(call: ToolCall, signal: AbortSignal, ownSignal: boolean, onProgress: ExecuteOptions['onProgress']): Promise<ToolCallOutcome> {
    const state = this.#state(call, signal)
    state.ownSignal = ownSignal
    state.onProgress = onProgress
    this.#active += 1
    this.#activity?.begin()
    return runCall(state, this.#finish)
  }

  /** A single call has committed: the runtime may be idle, and its contexts are delivered. */
  readonly #finish = (state: CallState): ToolCallOutcome => {
    this.#done()
    if (this.#onContexts && state.outcome!.contexts) this.#deliver([state])
    return state.outcome!
  }

  // A counter rather than a set of tracked promises: no extra promise chain per call.
  #done(): void {
    this.#active -= 1
    this.#activity?.end()
    if (this.#active === 0 && this.#idle) {
      this.#idle.resolve()
      this.#idle = undefined
    }
  }

  /**
   * Runs the calls of one model message: safe calls overlap in a bounded rolling pool, exclusive
   * calls are barriers, admission and commitment follow model order, and contexts are delivered
   * after the whole batch has committed. After an abort no call starts; each unstarted call still
   * gets its `tool/call` + `tool/result` pair (`ABORTED_BEFORE_DISPATCH`).
   */
  executeBatch(calls: readonly ToolCall[], options: ExecuteOptions = {}): Promise<ToolCallOutcome[]> {
    try {
      assertBatch(calls)
      assertSignal(options?.signal, 'executeBatch')
      assertListener(options?.onProgress, 'executeBatch')
      this.#assertOpen()
    } catch (error) {
      return Promise.reject(error)
    }
    this.#active += 1
    this.#activity?.begin()
    return this.#executeBatch(calls, options).finally(() => this.#done())
  }

  async #executeBatch(calls: readonly ToolCall[], options: ExecuteOptions): Promise<ToolCallOutcome[]> {
    const signal = this.#signal(options.signal)
    const states = calls.map((call) => this.#state(call, signal))
    if (options.onProgress !== undefined) for (const state of states) state.onProgress = options.onProgress
    await runBatch(states, signal, Math.max(1, this.#ctx.turn.policy.maxParallel ?? this.#ctx.limits.maxParallel))
    this.#deliver(states)
    return states.map((s) => s.outcome!)
  }

  #assertOpen(): void {
    if (this.#ctx.ended()) {
      throw new SeamError('TURN_ENDED', `turn ${this.#ctx.turn.turnId} has ended; its calls are not accepted`, {
        hint: 'begin a new turn with root.beginTurn()',
      })
    }
  }

  #state(call: ToolCall, signal: AbortSignal): CallState {
    return new CallState(this.#ctx, call, signal)
  }

  #deliver(states: readonly CallState[]): void {
    if (!this.#onContexts) return
    const contexts = states.flatMap((s) => s.outcome?.contexts ?? [])
    if (contexts.length === 0) return
    try {
      this.#onContexts(contexts)
    } catch {
      // Delivery is the host's concern; it cannot unsettle committed outcomes.
    }
  }
}

/**
 * Seqs of `turnId` after every event it holds and every seq its parked rounds keep: what a process
 * that is not the turn's own writes at. The turn must not be writing meanwhile (its process stopped).
 */
async function freshSeqs(journal: JournalStore, turnId: string): Promise<() => number> {
  const events = await journal.read(turnId)
  let seq = events.reduce((max, event) => Math.max(max, event.seq), 0)
  for (const round of await journal.coordination.parked({ turnId, settled: true })) {
    seq = Math.max(seq, round.decidedSeq, round.resultSeq, round.code?.subResultSeq ?? 0)
  }
  return () => ++seq
}

function lazySignal(signal: AbortSignal | (() => AbortSignal) | undefined): (() => AbortSignal) | undefined {
  return signal instanceof AbortSignal ? () => signal : signal
}

/** `journal.append`, each append's latency told to the probe. */
function timedAppend(journal: JournalStore, probe: TurnProbe): (event: JournalEvent) => Promise<void> {
  return (event) => {
    const started = performance.now()
    return journal.append(event).then(
      () => probe.appended!(event.kind, performance.now() - started, false),
      (error: unknown) => {
        probe.appended!(event.kind, performance.now() - started, true)
        throw error
      },
    )
  }
}

function withResolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

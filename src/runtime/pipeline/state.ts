/**
 * The working state of one call inside the runner (`CallState`), and what every call of its turn
 * shares (`TurnContext`): each refers to the other, so they live in one file.
 */
import { performance } from 'node:perf_hooks'
import type { ApprovalGrants } from '../approvals/approval.js'
import type { CapabilityIngress } from '../generations/capability-ingress.js'
import type { ToolBinding } from '../generations/tool-binding.js'
import type { ToolCapability } from '../../seams/capabilities.js'
import type { Generation } from '../generations/generation.js'
import type { CallProbe, TurnProbe } from '../generations/instrumentation.js'
import type { ParkedCall } from '../../seams/coordination.js'
import type { AppendNow } from '../journal/memory.js'
import type { ContentBlock, JournalEvent } from '../../seams/journal.js'
import type { TurnEnvelope } from '../../seams/types.js'
import type { DeferredContext, DispatchResult, ProgressEvent, ToolCall, ToolCallOutcome, ToolExecution } from '../../seams/calls.js'
import type { AbandonedCall } from './abandoned-call.js'
import type { CodeResume, Deferral } from './deferral.js'
import type { RuntimeLimits } from './limits.js'
import type { Settlement } from './settlement.js'

/** Runs a nested call of `outer` (see `NestedTools`): set by the turn's runtime, which counts it as its work. */
export type NestedCaller = (outer: CallState, name: string, args: ToolCall['arguments'] | undefined, signal: AbortSignal) => Promise<ToolCallOutcome>

/** What every call of one turn shares. */
export interface TurnContext {
  readonly turn: TurnEnvelope
  readonly generation: Generation
  /** The turn's tools by name, each bound to the turn's generation. */
  readonly tools: ReadonlyMap<string, ToolBinding>
  readonly ingress: CapabilityIngress
  readonly grants: ApprovalGrants
  readonly limits: RuntimeLimits
  /** True once the turn has ended (`turn.end()` called): new calls are refused. */
  readonly ended: () => boolean
  /**
   * Aborted when the turn ends: an open approval question is withdrawn (the call would not run
   * anyway). Made on first need: on Node 20 creating an `AbortSignal` costs about 6 µs, a third of a
   * turn, and most turns never ask a question.
   */
  readonly endSignal?: () => AbortSignal
  readonly nextSeq: () => number
  /**
   * A resumed parked call's `tool/result` seq, kept for it when it parked: its result is written
   * there, below what the turn wrote since; anything else it writes (a question, a nested call)
   * takes `nextSeq`.
   */
  readonly keptResult?: { readonly callId: string; readonly seq: number } | undefined
  /**
   * Call ids this turn has journaled (or is journaling): a second use is `DUPLICATE_CALL`. Unused
   * with `appendNow`, whose store's own uniqueness rule claims them.
   */
  readonly callIds: Set<string>
  readonly append: (event: JournalEvent) => Promise<void>
  /** The memory journal's append in the caller's step (see `appendNowOf`), unless appends are timed for a probe. */
  readonly appendNow?: AppendNow | undefined
  /** Gives back the seq `nextSeq` gave last, when nothing was written at it. */
  readonly unusedSeq?: ((seq: number) => void) | undefined
  /** Keeps the generation alive for a body that outlived its deadline. */
  readonly lease: () => () => void
  readonly onAbandoned: (info: AbandonedCall) => void
  /** Told of every call's progress (the root's `progress` event); `undefined` when no one listens. */
  readonly progress?: ((event: ProgressEvent) => void) | undefined
  /** Maps a thrown error to the tool source location (file, line), when known. */
  readonly locate: (error: unknown) => Record<string, unknown> | undefined
  /** The turn's instrumentation; `undefined` (nothing reported) without one. */
  readonly probe: TurnProbe | undefined
  /** Runs a body's nested calls (`ctx.tools.call`); without it a body has none to make. */
  readonly callNested?: NestedCaller
  /**
   * Resumes a parked Code Mode run (a round with `code`): set by a runtime that offers `run_code`.
   * `fresh` hands out seqs of the round's turn nothing else has taken.
   */
  readonly resumeCode?: (ctx: TurnContext, round: ParkedCall, signal: AbortSignal, fresh: () => number) => Promise<ToolCallOutcome>
}

/** `CallState`'s flags. */
const WAITED = 1
const JOURNALED = 2
const RESULT_JOURNALED = 4
const OWN_SIGNAL = 8
const DISPATCHED = 16
const HAS_VALUE = 32
const REPLAYED = 64

/** The mutable working state of one call inside the runner; never escapes it. */
export class CallState {
  readonly ctx: TurnContext
  readonly call: ToolCall
  /** The signal of the caller (turn, or batch). */
  readonly signal: AbortSignal
  /**
   * `performance.now()` when the call began: its duration, its `tool/call` time and, unless it
   * waited, its body's deadline count from here; with its duration, its `tool/result` time.
   */
  readonly startedAt = performance.now()
  /** The arguments as JSON text, as journaled in `tool/call`. */
  raw: string | undefined = undefined
  binding: ToolBinding | undefined = undefined
  /** Validated, deep-frozen arguments: set once the arguments stage accepted them. */
  args: Readonly<Record<string, unknown>> | undefined = undefined
  settled: Settlement | undefined = undefined
  value: unknown = undefined
  outcome: ToolCallOutcome | undefined = undefined
  /**
   * `performance.now()` when the body started, set only when the call waited since `startedAt`
   * (else the body started in the call's first step, at `startedAt`); and when it settled or was
   * abandoned, set only for a body that did not settle in the step it started. Journaled with the
   * result (`bodyAt`, `bodyMs`) for the console's waterfall. `undefined` until written: a number
   * field would box a value on every call.
   */
  bodyStart: number | undefined = undefined
  bodyEnd: number | undefined = undefined
  /**
   * The call's yes/no states, a bit each (read and written as the fields below): a state is made
   * for every call, and each field of an object is eight bytes of it.
   */
  #flags = WAITED
  /** What few calls use (see `RareCallState`); made on the first write of one of its fields. */
  #rare: RareCallState | undefined = undefined

  /** `parent`: the outer call of a nested call (see `NestedTools`). */
  constructor(ctx: TurnContext, call: ToolCall, signal: AbortSignal, parent?: CallState) {
    this.ctx = ctx
    this.call = call
    this.signal = signal
    if (parent !== undefined) this.#more().parent = parent
    // A nested call's span is a child of its outer call's.
    const outer = parent?.probe
    const probe = outer?.child !== undefined ? outer.child(call) : ctx.probe?.call(call)
    if (probe !== undefined) this.#more().probe = probe
  }

  /** The outer call of a nested call; `undefined` for a model's own call. */
  get parent(): CallState | undefined {
    return this.#rare?.parent
  }

  /** How many outer calls stand above this one: 0 for a model's call. */
  get depth(): number {
    let depth = 0
    for (let outer = this.parent; outer !== undefined; outer = outer.parent) depth += 1
    return depth
  }

  /** The call parks itself when a nested call of its is deferred, instead of the nested call (a Code Mode run). */
  get parksNested(): boolean {
    return this.#rare?.parksNested === true
  }
  set parksNested(value: boolean) {
    this.#more().parksNested = value
  }

  /** A nested call's deferred approval, for its outer call to park (see `parksNested`). */
  get deferral(): Deferral | undefined {
    return this.#rare?.deferral
  }
  set deferral(value: Deferral | undefined) {
    this.#more().deferral = value
  }

  /** Set on a resumed Code Mode run: what it replays. */
  get codeResume(): CodeResume | undefined {
    return this.#rare?.codeResume
  }
  set codeResume(value: CodeResume | undefined) {
    this.#more().codeResume = value
  }

  /** The number of the next nested call this call makes (1, 2, 3 …): its id is `<callId>/<n>`. */
  nextNested(): number {
    const rare = this.#more()
    rare.nested += 1
    return rare.nested
  }

  /** The tool the call runs: its snapshot's capability, once the generation stage found it. */
  get capability(): ToolCapability | undefined {
    return this.binding?.capability
  }

  /**
   * Something was awaited since `startedAt` (a journal write, a hook, an approval): the body's
   * deadline then counts from a clock reading at its start. True unless the runner says otherwise.
   */
  get waited(): boolean {
    return (this.#flags & WAITED) !== 0
  }
  set waited(value: boolean) {
    this.#flag(WAITED, value)
  }

  /** `tool/call` was written; only then is a `tool/result` written. */
  get journaled(): boolean {
    return (this.#flags & JOURNALED) !== 0
  }
  set journaled(value: boolean) {
    this.#flag(JOURNALED, value)
  }

  /** `tool/result` was handed to the journal (it is written once, even if `tool/call` landed late). */
  get resultJournaled(): boolean {
    return (this.#flags & RESULT_JOURNALED) !== 0
  }
  set resultJournaled(value: boolean) {
    this.#flag(RESULT_JOURNALED, value)
  }

  /** `signal` belongs to this call alone (not shared with its turn or batch). */
  get ownSignal(): boolean {
    return (this.#flags & OWN_SIGNAL) !== 0
  }
  set ownSignal(value: boolean) {
    this.#flag(OWN_SIGNAL, value)
  }

  /** Set when the body (or provider) was entered. */
  get dispatched(): boolean {
    return (this.#flags & DISPATCHED) !== 0
  }
  set dispatched(value: boolean) {
    this.#flag(DISPATCHED, value)
  }

  /** `value` is the call's (a provider that answered with content alone has none). */
  get hasValue(): boolean {
    return (this.#flags & HAS_VALUE) !== 0
  }
  set hasValue(value: boolean) {
    this.#flag(HAS_VALUE, value)
  }

  /** The value and content came from an idempotency key's stored result: the body does not run. */
  get replayed(): boolean {
    return (this.#flags & REPLAYED) !== 0
  }
  set replayed(value: boolean) {
    this.#flag(REPLAYED, value)
  }

  #flag(bit: number, on: boolean): void {
    this.#flags = on ? this.#flags | bit : this.#flags & ~bit
  }

  /** Told of the call's notable moments (see `Instrumentation`); `undefined` without instrumentation. */
  get probe(): CallProbe | undefined {
    return this.#rare?.probe
  }

  /**
   * The frozen view hooks, guards, wrappers and observers receive, once the arguments are
   * accepted. Built on first use: a call that meets no hook never pays for it (or its token).
   */
  get exec(): ToolExecution | undefined {
    if (this.args === undefined) return undefined
    const rare = this.#more()
    if (rare.exec === undefined) {
      const parent = rare.parent?.exec?.token
      const exec = {
        callId: this.call.callId,
        name: this.call.name,
        arguments: this.args,
        token: Symbol(this.call.callId),
        turn: this.ctx.turn,
        generation: this.ctx.generation.number,
        signal: this.signal,
      }
      rare.exec = Object.freeze(parent === undefined ? exec : { ...exec, parent })
    }
    return rare.exec
  }

  #more(): RareCallState {
    this.#rare ??= new RareCallState()
    return this.#rare
  }

  // The fields of `RareCallState`, read and written as the call's own. Reading one costs no
  // allocation, nor does writing `undefined` to one that was never set.

  /** Arguments as the concurrency classifier saw them (`null`: unparseable or invalid). */
  get classifyArgs(): Readonly<Record<string, unknown>> | null | undefined {
    return this.#rare?.classifyArgs
  }
  set classifyArgs(value: Readonly<Record<string, unknown>> | null | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().classifyArgs = value
  }

  get askReasons(): string[] | undefined {
    return this.#rare?.askReasons
  }
  set askReasons(value: string[] | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().askReasons = value
  }

  /** What the body (or provider) produced; kept only for post-execute hooks (see `decide`). */
  get dispatch(): DispatchResult | undefined {
    return this.#rare?.dispatch
  }
  set dispatch(value: DispatchResult | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().dispatch = value
  }

  /** A post-execute replacement (or a block's feedback): shown instead of anything else. */
  get content(): ContentBlock[] | undefined {
    return this.#rare?.content
  }
  set content(value: ContentBlock[] | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().content = value
  }

  /** What a provider returned as content, shown instead of the rendered value. */
  get providerContent(): ContentBlock[] | undefined {
    return this.#rare?.providerContent
  }
  set providerContent(value: ContentBlock[] | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().providerContent = value
  }

  get toolContexts(): DeferredContext[] | undefined {
    return this.#rare?.toolContexts
  }
  set toolContexts(value: DeferredContext[] | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().toolContexts = value
  }

  get decisionContexts(): DeferredContext[] | undefined {
    return this.#rare?.decisionContexts
  }
  set decisionContexts(value: DeferredContext[] | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().decisionContexts = value
  }

  /** The round this run resumes (a resume), and then the round it parked, if it parked again. */
  get parked(): ParkedCall | undefined {
    return this.#rare?.parked
  }
  set parked(value: ParkedCall | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().parked = value
  }

  /** Set when the call was parked: what resumes it. */
  get resumeToken(): string | undefined {
    return this.#rare?.resumeToken
  }
  set resumeToken(value: string | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().resumeToken = value
  }

  /** Told of this call's progress (`execute`'s `onProgress`: an MCP request's progress token). */
  get onProgress(): ((event: ProgressEvent) => void) | undefined {
    return this.#rare?.onProgress
  }
  set onProgress(value: ((event: ProgressEvent) => void) | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().onProgress = value
  }

  /** The idempotency key this call holds while it runs (see `idempotency.ts`). */
  get heldKey(): string | undefined {
    return this.#rare?.heldKey
  }
  set heldKey(value: string | undefined) {
    if (value !== undefined || this.#rare !== undefined) this.#more().heldKey = value
  }
}

/**
 * The fields of a call that few calls use: instrumentation (`probe`), batches (`classifyArgs`), approvals (`askReasons`,
 * `parked`, `resumeToken`), idempotency keys, hooks (`dispatch`, `content`, the execution view),
 * providers that answer with content, deferred contexts. Apart from the call's state, made on the
 * first write: a plain call's state is that much smaller (each field is 4 bytes and a store on
 * every call, and a call's allocation is most of what it costs beyond its work).
 */
class RareCallState {
  probe: CallProbe | undefined = undefined
  classifyArgs: Readonly<Record<string, unknown>> | null | undefined = undefined
  askReasons: string[] | undefined = undefined
  dispatch: DispatchResult | undefined = undefined
  content: ContentBlock[] | undefined = undefined
  providerContent: ContentBlock[] | undefined = undefined
  toolContexts: DeferredContext[] | undefined = undefined
  decisionContexts: DeferredContext[] | undefined = undefined
  parked: ParkedCall | undefined = undefined
  resumeToken: string | undefined = undefined
  heldKey: string | undefined = undefined
  onProgress: ((event: ProgressEvent) => void) | undefined = undefined
  exec: ToolExecution | undefined = undefined
  parent: CallState | undefined = undefined
  nested = 0
  parksNested = false
  deferral: Deferral | undefined = undefined
  codeResume: CodeResume | undefined = undefined
}

/**
 * One body invocation (`BodyRun`): its deadline and grace period, and its signals; `decide.ts`
 * settles the call from its result, and `dispatch.ts` puts the execute wrappers around it.
 */
import { performance } from 'node:perf_hooks'
import { SeamError, messageOf } from '../../errors.js'
import type { ToolExecutionResult } from '../../seams/types.js'
import { NEVER_ABORTED } from '../base/abort.js'
import { arming, unwatch, watch } from '../base/arming.js'
import { SeamBodyContext, ToolBodyContext } from './body-context.js'
import { ABANDONED, type BodyResult, decide } from './decide.js'
import { type Due, deadlines } from '../base/deadlines.js'
import type { CallState } from './state.js'
import { settle } from './settle.js'
import { RunSignals, RunTimer } from './run-signals.js'
import { seamId, seamResult } from './seam-result.js'
import { CallProgress, checkProgress } from './progress.js'
import { askQuestion } from './ask.js'
import { listRoots, sampleClient } from './client-requests.js'
import type { ClientRoot, QuestionAnswer, SampleResult } from '../../seams/questions.js'
import type { DispatchResult } from '../../seams/calls.js'

/** What commits a call once its body has settled (`commitCall`), and what it hands back (`finish`). */
export type Commit = (state: CallState, finish: (state: CallState) => unknown) => unknown

/** `BodyRun`'s flags. */
const TIMED_OUT = 1
const ABANDONED_BODY = 2
const ABORT_CAUSED = 4
/** In the deadline queue. */
const QUEUED = 8
/** Settles its call itself (no wrappers; see `run`). */
const DECIDES = 16
/** The body has settled. */
const SETTLED = 32
/** Listening for aborts, and queued for its deadline (see `arm`). */
const ARMED = 64
/** Its call no longer waits for it. */
const FINISHED = 128

/**
 * One body invocation with its deadline, grace period and signals. The body's `AbortController`
 * is created only when the body (or provider) reads its signal: creating an `AbortSignal` costs
 * microseconds on Node 20, and most bodies finish without ever looking at it.
 */
export class BodyRun implements Due {
  readonly state: CallState
  /**
   * When the body started (`performance.now()`), read only if the call waited since it began: the
   * body's deadline counts from here, else from the call's start (see `arm`).
   */
  #began: number | undefined = undefined
  /**
   * The deadline, set when the run joins the deadline queue (`arm`), as its own entry there (no
   * timer object per call). Kept as `undefined` until then, not a number: a field that only ever
   * holds numbers holds a boxed one from the start, an allocation on every call.
   */
  #due: number | undefined = undefined
  /**
   * The run's yes/no states, a bit each (`TIMED_OUT` …): a run is made for every call, and each
   * field of an object is eight bytes of it.
   */
  #flags = 0
  /** Signals, timers and leases, made on first need. */
  #signals: RunSignals | undefined
  #resolve: ((value: unknown) => void) | undefined
  /** For a run that settles its call (`runBody`): what commits it then, and the caller's `finish`. */
  #commit: Commit | undefined
  #finishCall: ((state: CallState) => unknown) | undefined

  constructor(state: CallState) {
    this.state = state
  }

  /** The body's deadline (a tool's own wins over the turn's policy and the root's limit). */
  get timeoutMs(): number {
    const { ctx, capability } = this.state
    return capability?.timeoutMs ?? ctx.turn.policy.timeoutMs ?? ctx.limits.timeoutMs
  }

  /** How far progress may push the deadline, from the body's start (`defineTool`'s `maxTimeoutMs`). */
  get maxTimeoutMs(): number | undefined {
    const max = this.state.capability?.maxTimeoutMs
    return max === undefined ? undefined : Math.max(max, this.timeoutMs)
  }

  get graceMs(): number {
    const { ctx } = this.state
    return ctx.turn.policy.graceMs ?? ctx.limits.graceMs
  }

  get due(): number {
    return this.#due ?? Number.POSITIVE_INFINITY
  }

  get timedOut(): boolean {
    return (this.#flags & TIMED_OUT) !== 0
  }

  get abandoned(): boolean {
    return (this.#flags & ABANDONED_BODY) !== 0
  }

  /** The body failed because of the caller's abort (not a failure of its own). */
  get abortCaused(): boolean {
    return (this.#flags & ABORT_CAUSED) !== 0
  }

  // Private accessors (`get #x()`) are read through a call into the runtime, even in optimized
  // code: the run's own states are bit tests written out, and the seam's id a function.

  #more(): RunSignals {
    this.#signals ??= new RunSignals()
    return this.#signals
  }

  /** The signal handed to the body: created on first read, already aborted if the run was. */
  get signal(): AbortSignal {
    const more = this.#more()
    if (!more.controller) {
      // A body that reads its signal is told of an abort at once.
      this.arm()
      more.controller = new AbortController()
      if (more.reason) more.controller.abort(more.reason.value)
    }
    return more.controller.signal
  }

  /**
   * The body reported progress: checked (a malformed report throws `INVALID_PROGRESS` to the body),
   * handed on (see `progress.ts`) and, for a tool with `maxTimeoutMs`, its deadline moved to
   * `timeoutMs` from now, never past `maxTimeoutMs` from its start. Ignored once the call no
   * longer waits for the body, or after its deadline passed.
   */
  progress(input: unknown): void {
    const more = this.#more()
    const progress = checkProgress(input, more.progress?.done ?? 0)
    if ((this.#flags & (FINISHED | TIMED_OUT | ABANDONED_BODY)) !== 0) return
    const max = this.maxTimeoutMs
    if (max !== undefined) {
      this.arm()
      if ((this.#flags & QUEUED) !== 0) {
        // Later only: the queue's timer, armed for the earlier time, finds this entry not yet due and re-arms.
        const due = Math.min(performance.now() + this.timeoutMs, (this.#began ?? this.state.startedAt) + max)
        if (due > this.#due!) this.#due = due
      }
    }
    more.progress ??= new CallProgress(this.state)
    more.progress.report(progress)
  }

  /**
   * The body asks a question (see `pipeline/ask.ts`); numbered per call. While one is open the
   * deadline waits (a person's time is not the body's); once all are answered `timeoutMs` counts
   * again from then.
   */
  ask(input: unknown): Promise<QuestionAnswer> {
    return this.#asking((signal, index) => askQuestion(this.state, signal, input, index))
  }

  /** The body asks its client to sample (see `pipeline/client-requests.ts`); numbered and timed as a question. */
  sample(input: unknown): Promise<SampleResult> {
    return this.#asking((signal, index) => sampleClient(this.state, signal, input, index))
  }

  /** The body asks its client for its roots; numbered and timed as a question. */
  roots(input: unknown): Promise<readonly ClientRoot[]> {
    return this.#asking((signal, index) => listRoots(this.state, signal, input, index))
  }

  #asking<T>(ask: (signal: AbortSignal, index: number) => Promise<T>): Promise<T> {
    const more = this.#more()
    more.questions += 1
    const signal = this.signal
    if ((this.#flags & QUEUED) !== 0) {
      more.asking += 1
      this.#due = Number.POSITIVE_INFINITY
    }
    let asked: Promise<T>
    try {
      asked = ask(signal, more.questions)
    } catch (error) {
      asked = Promise.reject(error)
    }
    if (more.asking === 0) return asked
    return asked.finally(() => {
      more.asking -= 1
      if (more.asking > 0 || (this.#flags & QUEUED) === 0) return
      // Re-queued: the queue's timer is armed for an earlier time only if something else is due.
      deadlines.delete(this)
      this.#due = performance.now() + this.timeoutMs
      deadlines.add(this)
    })
  }

  abandonedResult(): DispatchResult {
    return { ok: false, error: 'abandoned' }
  }

  /** Deadline reached (the deadline queue calls this). */
  fire(): void {
    this.#flags &= ~QUEUED
    this.expire()
  }

  /** Runs the body; resolves with its result (for the wrappers around it). */
  start(substituted: AbortSignal | undefined): Promise<BodyResult> {
    // A wrapper that calls next() after it returned: its call has settled, nothing may run now.
    if ((this.#flags & FINISHED) !== 0) return Promise.reject(new SeamError('INVALID_CALL', 'an execute wrapper called next() after its call had settled'))
    return new Promise<BodyResult>((resolve) => this.#begin(substituted, false, resolve as (value: unknown) => void))
  }

  /**
   * Runs the body and settles the call from its result (no wrappers): one promise in all. With
   * `commit`, it then commits the call too and resolves with what that returns.
   */
  run(commit: Commit | undefined, finish: ((state: CallState) => unknown) | undefined): Promise<unknown> {
    this.#commit = commit
    this.#finishCall = finish
    BodyRun.#starting = this
    return new Promise(BodyRun.#startRun)
  }

  /**
   * Runs the body and settles the call from its result (no wrappers), then calls `done`, with no
   * promise of its own: a batch call, which its batch commits in model order once `done` is called
   * (see `turns/batch.ts`). `done` may be called before this returns (a body that returned at once).
   */
  notify(done: () => void): void {
    try {
      this.#begin(undefined, true, done)
    } catch (error) {
      this.#runtimeFault(error)
    }
  }

  /** Only a fault of the runtime's own gets here (the body's throws are caught inside): the call still settles. */
  #runtimeFault(error: unknown): void {
    this.#bodySettled({ ok: false, error: messageOf(error), details: { internal: true } })
  }

  /** The run whose promise is being made: `#startRun` picks it up at once. */
  static #starting: BodyRun | undefined
  /** The executor of every `run()`: one function for all runs, so a call allocates no closure for it. */
  static readonly #startRun = (resolve: (value: unknown) => void): void => {
    const run = BodyRun.#starting!
    BodyRun.#starting = undefined
    try {
      run.#begin(undefined, true, resolve)
    } catch (error) {
      run.#runtimeFault(error)
    }
  }

  #begin(substituted: AbortSignal | undefined, decides: boolean, resolve: (value: unknown) => void): void {
    const { state } = this
    state.dispatched = true
    if (decides) this.#flags |= DECIDES
    this.#resolve = resolve
    if (substituted !== undefined) this.#more().substituted = substituted
    // A call that awaited nothing since it began starts its body in the same synchronous step: its
    // deadline counts from the call's start (earlier by the admission's own work), with no clock read.
    if (state.waited) {
      this.#began = performance.now()
      state.bodyStart = this.#began
    }
    // Listening for aborts and joining the deadline queue wait for the end of this event-loop turn:
    // most bodies settle within it and never pay for either (see `arming`).
    arming.defer(this)
    let pending: Promise<unknown>
    try {
      const { binding, args, call } = state
      if (binding!.kind === 'seam') {
        const { service } = binding!
        const context = new SeamBodyContext(this, state, binding!)
        const { probe } = state
        const result: unknown = probe
          ? probe.within(service.execute, service, binding!.scope, call.name, args!, context)
          : service.execute(binding!.scope, call.name, args!, context)
        // A provider written in plain JavaScript may answer synchronously (or with a foreign thenable).
        pending = result instanceof Promise ? result : Promise.resolve(result)
      } else {
        const { plan } = binding!
        const context = new ToolBodyContext(this, state, binding!)
        const { probe } = state
        const value: unknown = probe ? probe.within(plan.execute, plan.definition, args as never, context) : plan.execute.call(plan.definition, args as never, context)
        if (!(value instanceof Promise)) {
          this.#bodySettled(undefined, value)
          return
        }
        pending = value
      }
    } catch (error) {
      this.#bodySettled(this.#failure(error))
      return
    }
    pending.then(
      (value) => {
        this.state.bodyEnd = performance.now()
        const seam = seamId(this.state)
        this.#bodySettled(seam === undefined ? undefined : seamResult(value as ToolExecutionResult, seam), value)
      },
      (error: unknown) => {
        this.state.bodyEnd = performance.now()
        this.#bodySettled(this.#failure(error))
      },
    )
  }

  /**
   * Starts listening to the caller's (and a wrapper's) signal and joins the deadline queue. Done at
   * the end of the event-loop turn the body started in, or at once when the body reads its signal;
   * an abort that came before is seen here (`#link` checks `aborted`), and the deadline counts from
   * the start of the body either way.
   */
  arm(): void {
    if ((this.#flags & (ARMED | FINISHED)) !== 0) return
    this.#flags |= ARMED
    const { state } = this
    // Re-fuse the caller's signal: a wrapper may replace the dispatch signal, never drop the caller's.
    this.#link(state.signal)
    const substituted = this.#signals?.substituted
    if (substituted && substituted !== state.signal) this.#link(substituted)
    if ((this.#flags & FINISHED) !== 0) return
    this.#due = (this.#began ?? state.startedAt) + this.timeoutMs
    this.#flags |= QUEUED
    deadlines.add(this)
  }

  get finished(): boolean {
    return (this.#flags & FINISHED) !== 0
  }

  finish(): void {
    const flags = this.#flags
    this.#flags = (flags | FINISHED) & ~QUEUED
    // The last report reaches observers before the outcome does.
    if ((flags & FINISHED) === 0) this.#signals?.progress?.flush()
    if ((flags & ARMED) === 0) return
    if ((flags & QUEUED) !== 0) deadlines.delete(this)
    const more = this.#signals
    if (more === undefined) return
    if (more.grace) deadlines.delete(more.grace)
    if (more.watched) for (const signal of more.watched) unwatch(signal, this)
    more.watched = undefined
    if (more.own && more.onOwnAbort) more.own.removeEventListener('abort', more.onOwnAbort)
    more.own = undefined
  }

  /** The caller's (or a wrapper's) signal aborted. */
  abortFrom(signal: AbortSignal): void {
    this.#abort(signal.reason)
    this.#startGrace()
  }

  expire(): void {
    this.#flags |= TIMED_OUT
    this.state.probe?.timedOut(this.timeoutMs)
    this.#abort(new DOMException(`timed out after ${this.timeoutMs} ms`, 'TimeoutError'))
    this.#startGrace()
  }

  /**
   * The wrappers around this run outlived the stage: stop and abandon a body still running.
   * True when this run reported an abandoned body (now or before).
   */
  cutOff(): boolean {
    if (this.state.dispatched && (this.#flags & SETTLED) === 0 && !this.abandoned) {
      this.#flags |= TIMED_OUT
      this.#abort(new DOMException(`timed out after ${this.timeoutMs} ms`, 'TimeoutError'))
      this.abandon()
    }
    this.finish()
    return this.abandoned
  }

  abandon(): void {
    if ((this.#flags & SETTLED) !== 0) return
    const { ctx, call } = this.state
    this.#flags |= ABANDONED_BODY
    this.state.bodyEnd = performance.now()
    // The body outlived its deadline: keep its generation alive until it really settles.
    this.#more().release = ctx.lease()
    this.state.probe?.abandoned()
    ctx.onAbandoned({ callId: call.callId, name: call.name, generation: ctx.generation.number, since: Date.now() })
    this.#complete(ABANDONED)
  }

  /**
   * The body settled: `result`, or (`undefined`) the `value` a `defineTool` body returned, for
   * which a run that decides its call makes no `{ ok, value }` result (see `decide`).
   */
  #bodySettled(result: DispatchResult | undefined, value?: unknown): void {
    this.#flags |= SETTLED
    const release = this.#signals?.release
    if (release) {
      release()
      this.state.probe?.returnedLate()
    }
    this.#complete(result, value)
  }

  #complete(result: BodyResult | undefined, value?: unknown): void {
    const resolve = this.#resolve
    if (resolve === undefined) return
    this.#resolve = undefined
    if ((this.#flags & DECIDES) === 0) {
      // The wrappers around the body get a result.
      resolve(result ?? { ok: true, value })
      return
    }
    this.finish()
    try {
      decide(this.state, this, result, value)
    } catch (error) {
      settle(this.state, { status: 'failed', code: 'TOOL_ERROR', message: `The call to "${this.state.call.name}" failed inside the runtime: ${messageOf(error)}`, details: { internal: true } })
    }
    const commit = this.#commit
    if (commit === undefined) {
      resolve(undefined)
      return
    }
    // Resolving with the commit's promise (a journal that waits) adopts it. `commit` settles its
    // own faults; a `finish` that throws rejects the call's promise rather than leave it pending.
    let committed: unknown
    try {
      committed = commit(this.state, this.#finishCall!)
    } catch (error) {
      committed = Promise.reject(error)
    }
    resolve(committed)
  }

  #abort(reason: unknown): void {
    const more = this.#more()
    if (more.reason) return
    more.reason = { value: reason }
    more.controller?.abort(reason)
  }

  #link(signal: AbortSignal): void {
    if (signal === NEVER_ABORTED) return
    if (signal.aborted) {
      this.abortFrom(signal)
      return
    }
    if (signal === this.state.signal && this.state.ownSignal) {
      // A signal of this call alone (an MCP request's): one listener, removed when the run ends.
      const more = this.#more()
      more.onOwnAbort = () => this.abortFrom(signal)
      signal.addEventListener('abort', more.onOwnAbort, { once: true })
      more.own = signal
      return
    }
    watch(signal, this)
    const more = this.#more()
    more.watched ??= []
    more.watched.push(signal)
  }


  #startGrace(): void {
    const more = this.#more()
    if (more.grace) return
    more.grace = new RunTimer(performance.now() + this.graceMs, () => this.abandon())
    deadlines.add(more.grace)
  }

  #failure(error: unknown): DispatchResult {
    // An abort the run has not heard of yet (it arms at the end of the turn) still explains the failure.
    this.arm()
    const reason = this.#signals?.reason
    if (reason && (error === reason.value || (error instanceof Error && error.name === 'AbortError'))) {
      this.#flags |= ABORT_CAUSED
    }
    let details: Record<string, unknown> | undefined
    try {
      details = this.state.ctx.locate(error)
    } catch {
      details = undefined
    }
    // A provider that is down says so with a coded error: the call never reached the tool.
    if (seamId(this.state) !== undefined && SeamError.is(error, 'PROVIDER_UNAVAILABLE')) return { ok: false, error: messageOf(error), details, unavailable: true }
    return { ok: false, error: messageOf(error), details }
  }
}

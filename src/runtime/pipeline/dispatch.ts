import { SeamError, messageOf } from '../../errors.js'
import type { ToolContext } from '../../features/define-tool.js'
import { silentLogger } from '../logger.js'
import { type CallState, settle, toDeferred } from './state.js'
import type { DispatchResult, ExecuteWrapper, ToolExecution } from './types.js'

const ABANDONED: unique symbol = Symbol('abandoned')
type BodyResult = DispatchResult | typeof ABANDONED

/**
 * Stage 7: `execute` wrappers around dispatch, then the body or `ToolService.execute`. The body's
 * signal fuses the caller's signal, a wrapper's replacement and the deadline. A body still running
 * `graceMs` after its deadline (or after a caller abort) is settled without it and tracked as
 * abandoned: it keeps its generation leased until it really settles.
 */
export async function dispatch(state: CallState): Promise<void> {
  const { exec } = state
  if (!exec) return
  const wrappers = state.ctx.generation.hooks.execute
  const run = new BodyRun(state)
  let result: BodyResult
  try {
    result = wrappers.length === 0 ? await run.start(undefined) : await wrap(wrappers, 0, exec, run, undefined)
  } catch (error) {
    result = { ok: false, error: `an execute wrapper failed: ${messageOf(error)}`, details: { stage: 'execute-wrapper' } }
  } finally {
    run.finish()
  }
  decide(state, run, result)
}

function wrap(wrappers: readonly ExecuteWrapper[], index: number, exec: ToolExecution, run: BodyRun, signal: AbortSignal | undefined): Promise<BodyResult> {
  const wrapper = wrappers[index]
  if (!wrapper) return run.start(signal)
  let called = false
  const next = (replacement?: AbortSignal): Promise<DispatchResult> => {
    if (called) return Promise.reject(new SeamError('INVALID_CALL', 'an execute wrapper called next() twice'))
    called = true
    const substituted = replacement instanceof AbortSignal ? replacement : signal
    return wrap(wrappers, index + 1, exec, run, substituted).then((r) => (r === ABANDONED ? run.abandonedResult() : r))
  }
  return Promise.resolve(wrapper(exec, next)).then((r) => (run.abandoned ? ABANDONED : validResult(r)))
}

function validResult(result: unknown): DispatchResult {
  const r = result as DispatchResult | null
  if (r && r.ok === true) return r
  if (r && r.ok === false && typeof r.error === 'string') return r
  return { ok: false, error: 'an execute wrapper returned an invalid result' }
}

function decide(state: CallState, run: BodyRun, result: BodyResult): void {
  const name = state.call.name
  if (run.timedOut) {
    settle(state, {
      status: 'failed',
      code: 'TOOL_TIMEOUT',
      message: `The tool "${name}" did not finish within ${run.timeoutMs} ms and was stopped. Try a smaller request.`,
      details: run.abandoned ? { abandoned: true } : undefined,
    })
    return
  }
  const cancelled = state.signal.aborted
  if (result === ABANDONED) {
    settle(state, { status: 'cancelled', code: 'ABORTED', message: `The call to "${name}" was cancelled.`, details: { abandoned: true } })
    return
  }
  state.dispatch = result
  if (result.ok) {
    if (cancelled) {
      settle(state, { status: 'cancelled', code: 'ABORTED', message: `The call to "${name}" was cancelled; its result was discarded.` })
      return
    }
    state.value = result.value
    state.hasValue = true
    return
  }
  if (cancelled && run.abortCaused) {
    settle(state, { status: 'cancelled', code: 'ABORTED', message: `The call to "${name}" was cancelled.` })
    return
  }
  settle(state, {
    status: 'failed',
    code: 'TOOL_ERROR',
    message: `The tool "${name}" failed: ${result.error}`,
    details: result.details,
  })
}

/** One body invocation with its deadline, grace period and signals. */
class BodyRun {
  readonly state: CallState
  readonly timeoutMs: number
  readonly graceMs: number
  timedOut = false
  abandoned = false
  /** The body failed because of the caller's abort (not a failure of its own). */
  abortCaused = false
  #controller: AbortController | undefined
  #deadline: NodeJS.Timeout | undefined
  #grace: NodeJS.Timeout | undefined
  #cleanups: (() => void)[] = []
  #settleEarly: ((r: BodyResult) => void) | undefined

  constructor(state: CallState) {
    this.state = state
    const { ctx, capability } = state
    this.timeoutMs = capability?.timeoutMs ?? ctx.turn.policy.timeoutMs ?? ctx.limits.timeoutMs
    this.graceMs = ctx.turn.policy.graceMs ?? ctx.limits.graceMs
  }

  abandonedResult(): DispatchResult {
    return { ok: false, error: 'abandoned' }
  }

  start(substituted: AbortSignal | undefined): Promise<BodyResult> {
    const { state } = this
    state.dispatched = true
    const controller = new AbortController()
    this.#controller = controller
    // Re-fuse the caller's signal: a wrapper may replace the dispatch signal, never drop the caller's.
    this.#link(state.signal)
    if (substituted && substituted !== state.signal) this.#link(substituted)
    this.#deadline = setTimeout(() => {
      this.timedOut = true
      controller.abort(new DOMException(`timed out after ${this.timeoutMs} ms`, 'TimeoutError'))
      this.#startGrace()
    }, this.timeoutMs)
    let body: Promise<DispatchResult>
    try {
      body = invokeBody(state, controller.signal)
    } catch (error) {
      body = Promise.resolve(this.#failure(error))
    }
    const settled = body.then(
      (r) => r,
      (error: unknown) => this.#failure(error),
    )
    const early = new Promise<BodyResult>((resolve) => {
      this.#settleEarly = resolve
    })
    void settled.finally(() => this.#release?.())
    return Promise.race([settled, early])
  }

  #release: (() => void) | undefined

  finish(): void {
    clearTimeout(this.#deadline)
    clearTimeout(this.#grace)
    for (const cleanup of this.#cleanups) cleanup()
    this.#cleanups = []
  }

  #link(signal: AbortSignal): void {
    if (signal.aborted) {
      this.#onAbort(signal)
      return
    }
    const listener = () => this.#onAbort(signal)
    signal.addEventListener('abort', listener, { once: true })
    this.#cleanups.push(() => signal.removeEventListener('abort', listener))
  }

  #onAbort(signal: AbortSignal): void {
    this.#controller?.abort(signal.reason)
    this.#startGrace()
  }

  #startGrace(): void {
    if (this.#grace) return
    this.#grace = setTimeout(() => {
      const { ctx, call } = this.state
      this.abandoned = true
      // The body outlived its deadline: keep its generation alive until it really settles.
      this.#release = ctx.lease()
      ctx.onAbandoned({ callId: call.callId, name: call.name, generation: ctx.generation.number, since: Date.now() })
      this.#settleEarly?.(ABANDONED)
    }, this.graceMs)
  }

  #failure(error: unknown): DispatchResult {
    const signal = this.#controller?.signal
    if (signal?.aborted && (error === signal.reason || (error instanceof Error && error.name === 'AbortError'))) {
      this.abortCaused = true
    }
    const details = this.state.ctx.locate(error)
    return { ok: false, error: messageOf(error), details }
  }
}

function invokeBody(state: CallState, signal: AbortSignal): Promise<DispatchResult> {
  const { binding, args, ctx, call } = state
  if (!binding || !args) return Promise.resolve({ ok: false, error: 'no binding' })
  if (binding.kind === 'seam') {
    return binding.service
      .execute(binding.scope, call.name, args, {
        callId: call.callId,
        turnId: ctx.turn.turnId,
        session: ctx.turn.session,
        principal: ctx.turn.principal,
        generation: ctx.generation.number,
        owner: binding.scope,
        signal,
        question: ctx.turn.ports.question,
        turn: ctx.turn,
      })
      .then((r): DispatchResult => {
        if (r?.success === true) return { ok: true, value: r.output }
        if (r?.success === false) return { ok: false, error: String(r.error), details: r.metadata ? { metadata: r.metadata } : undefined }
        return { ok: false, error: `the tool service "${binding.service.id}" returned an invalid result` }
      })
  }
  const { slot } = binding
  const toolCtx: ToolContext = {
    signal,
    callId: call.callId,
    turn: ctx.turn,
    generation: ctx.generation.number,
    owner: slot.owner,
    use: (token) => slot.plugin.resources.use(token),
    deferContext: (message) => {
      state.toolContexts ??= []
      state.toolContexts.push(toDeferred(message))
    },
    log: silentLogger,
  }
  const value = slot.definition.execute(args as never, toolCtx)
  return value instanceof Promise
    ? value.then((v): DispatchResult => ({ ok: true, value: v }))
    : Promise.resolve({ ok: true, value })
}

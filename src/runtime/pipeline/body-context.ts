import type { ToolContext, ToolLogger } from '../../features/define-tool.js'
import type { TraceContext } from '../../seams/trace.js'
import type { ClientRoot, QuestionAnswer, SampleResult } from '../../seams/questions.js'
import type { Principal, QuestionPort, ToolInvocationContext } from '../../seams/types.js'
import type { ToolBinding } from '../generations/tool-binding.js'
import { Logger, silentLogger } from '../base/logger.js'
import type { Token } from '../../seams/tokens.js'
import type { TurnEnvelope } from '../../seams/types.js'
import { keyDigest } from './idempotency.js'
import type { CallState } from './state.js'
import { toDeferred } from './content.js'
import { SeamError } from '../../errors.js'
import type { NestedTools, ToolCallOutcome } from '../../seams/calls.js'

/**
 * `ctx.tools` of a body: nested calls of its call (see `nestedCall`), each under the body's signal
 * and its own, if given. Made on first read.
 */
export function nestedTools(source: SignalSource, state: CallState): NestedTools {
  return Object.freeze({
    call(name: string, args?: Readonly<Record<string, unknown>> | string, options?: { readonly signal?: AbortSignal }): Promise<ToolCallOutcome> {
      const caller = state.ctx.callNested
      if (caller === undefined) return Promise.reject(new SeamError('INVALID_CALL', 'this call runs outside a turn runtime: it cannot call tools'))
      if (typeof name !== 'string') return Promise.reject(new SeamError('INVALID_CALL', 'ctx.tools.call: name must be a string'))
      const own = options?.signal
      if (own !== undefined && !(own instanceof AbortSignal)) return Promise.reject(new SeamError('INVALID_CALL', 'ctx.tools.call: `signal` must be an AbortSignal'))
      const signal = own === undefined ? source.signal : AbortSignal.any([source.signal, own])
      return caller(state, name, args, signal)
    },
  })
}

/** Where a body's signal comes from: created on first read (see `BodyRun`). */
export interface SignalSource {
  readonly signal: AbortSignal
  progress(input: unknown): void
  ask(input: unknown): Promise<QuestionAnswer>
  sample(input: unknown): Promise<SampleResult>
  roots(input: unknown): Promise<readonly ClientRoot[]>
}

type FeatureBinding = Extract<ToolBinding, { kind: 'feature' }>
type SeamBinding = Extract<ToolBinding, { kind: 'seam' }>

/**
 * What a `defineTool` body receives. `signal`, `use` and `deferContext` are getters on the
 * prototype, created on first read: a body that never reads them costs no `AbortController` and no
 * closures (an object literal with a getter costs more still). The functions they return do not
 * depend on `this`, so a body may destructure them.
 */
export class ToolBodyContext implements ToolContext {
  readonly callId: string
  readonly turn: TurnEnvelope
  readonly generation: number
  readonly owner: string
  readonly trace: TraceContext | undefined
  readonly #source: SignalSource
  readonly #state: CallState
  /** `use`, `deferContext`, `log`, `tools`, `progress` and `ask` once read (few bodies read any): one field. */
  #made:
    | {
        use?: <T>(token: Token<T>) => T
        defer?: ToolContext['deferContext']
        log?: ToolLogger
        tools?: NestedTools
        progress?: ToolContext['progress']
        ask?: ToolContext['ask']
        sample?: ToolContext['sample']
        roots?: ToolContext['roots']
      }
    | undefined

  constructor(source: SignalSource, state: CallState, binding: FeatureBinding) {
    this.#source = source
    this.#state = state
    this.callId = state.call.callId
    this.turn = state.ctx.turn
    this.generation = state.ctx.generation.number
    this.owner = binding.slot.owner
    this.trace = state.call.trace
  }

  get signal(): AbortSignal {
    return this.#source.signal
  }

  get idempotencyKey(): string | undefined {
    const key = this.#state.heldKey
    return key === undefined ? undefined : keyDigest(key)
  }

  /**
   * The owning plugin's logger: lines are labelled with the plugin, as its setup's are. A call with
   * a `log` sink (a served MCP call) tells it each line too, redacted as the plugin's log is.
   */
  get log(): ToolLogger {
    const own = (this.#state.binding as FeatureBinding).slot.plugin.log ?? silentLogger
    const sink = this.#state.call.log
    if (sink === undefined) return own
    this.#made ??= {}
    this.#made.log ??= both(own, new Logger((level, _scope, message, fields) => sink(level, message, fields)))
    return this.#made.log
  }

  get use(): <T>(token: Token<T>) => T {
    this.#made ??= {}
    const made = this.#made
    const { plugin } = (this.#state.binding as FeatureBinding).slot
    made.use ??= (token) => plugin.resources.use(token)
    return made.use
  }

  get progress(): ToolContext['progress'] {
    this.#made ??= {}
    const made = this.#made
    const source = this.#source
    made.progress ??= (progress) => source.progress(progress)
    return made.progress
  }

  get ask(): ToolContext['ask'] {
    this.#made ??= {}
    const made = this.#made
    const source = this.#source
    made.ask ??= (question) => source.ask(question)
    return made.ask
  }

  get sample(): ToolContext['sample'] {
    this.#made ??= {}
    const made = this.#made
    const source = this.#source
    made.sample ??= (request) => source.sample(request)
    return made.sample
  }

  get roots(): ToolContext['roots'] {
    this.#made ??= {}
    const made = this.#made
    const source = this.#source
    made.roots ??= (query) => source.roots(query)
    return made.roots
  }

  get deferContext(): ToolContext['deferContext'] {
    this.#made ??= {}
    const made = this.#made
    const state = this.#state
    made.defer ??= (message) => {
      state.toolContexts ??= []
      state.toolContexts.push(toDeferred(message))
    }
    return made.defer
  }

  get tools(): NestedTools {
    this.#made ??= {}
    this.#made.tools ??= nestedTools(this.#source, this.#state)
    return this.#made.tools
  }
}

/** A logger that writes every line to both. */
function both(first: ToolLogger, second: ToolLogger): ToolLogger {
  return {
    debug(message, fields) {
      first.debug(message, fields)
      second.debug(message, fields)
    },
    info(message, fields) {
      first.info(message, fields)
      second.info(message, fields)
    },
    warn(message, fields) {
      first.warn(message, fields)
      second.warn(message, fields)
    },
  }
}

/** What `ToolService.execute` receives for a seam tool; `signal` and `progress` are made on first read. */
export class SeamBodyContext implements ToolInvocationContext {
  readonly callId: string
  readonly turnId: string
  readonly session: string
  readonly principal: Principal
  readonly generation: number
  readonly owner: string
  readonly question: QuestionPort | undefined
  readonly turn: TurnEnvelope
  readonly trace: TraceContext | undefined
  readonly #source: SignalSource
  readonly #state: CallState
  #progress: ToolInvocationContext['progress'] | undefined
  #ask: ToolInvocationContext['ask'] | undefined
  #sample: ToolInvocationContext['sample'] | undefined
  #roots: ToolInvocationContext['roots'] | undefined
  #tools: NestedTools | undefined

  constructor(source: SignalSource, state: CallState, binding: SeamBinding) {
    const { turn } = state.ctx
    this.#source = source
    this.#state = state
    this.callId = state.call.callId
    this.turnId = turn.turnId
    this.session = turn.session
    this.principal = turn.principal
    this.generation = state.ctx.generation.number
    this.owner = binding.scope
    this.question = turn.ports.question
    this.turn = turn
    this.trace = state.call.trace
  }

  get signal(): AbortSignal {
    return this.#source.signal
  }

  get idempotencyKey(): string | undefined {
    const key = this.#state.heldKey
    return key === undefined ? undefined : keyDigest(key)
  }

  /** Reports the call's progress (a mounted MCP server's `notifications/progress` come here). */
  get progress(): ToolInvocationContext['progress'] {
    const source = this.#source
    this.#progress ??= (progress) => source.progress(progress)
    return this.#progress
  }

  /** Asks the person behind the turn (a mounted MCP server's elicitation comes here). */
  get ask(): ToolInvocationContext['ask'] {
    const source = this.#source
    this.#ask ??= (question) => source.ask(question)
    return this.#ask
  }

  /** Asks the turn's client to sample (`ctx.sample`). */
  get sample(): ToolInvocationContext['sample'] {
    const source = this.#source
    this.#sample ??= (request) => source.sample(request)
    return this.#sample
  }

  /** Asks the turn's client for its roots (`ctx.roots`). */
  get roots(): ToolInvocationContext['roots'] {
    const source = this.#source
    this.#roots ??= (query) => source.roots(query)
    return this.#roots
  }

  get tools(): NestedTools {
    this.#tools ??= nestedTools(this.#source, this.#state)
    return this.#tools
  }

  /**
   * The call a runtime-made context belongs to, for the runtime's own built-in tools (`run_code`
   * runs its sub-calls as nested calls of it); `undefined` for any other object.
   */
  static callOf(context: unknown): CallState | undefined {
    return context instanceof SeamBodyContext ? context.#state : undefined
  }
}

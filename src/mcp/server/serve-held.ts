import { randomUUID } from 'node:crypto'
import { type CallToolResult, type InputRequiredResult, inputRequired, ProtocolError, ProtocolErrorCode, type ServerContext } from '@modelcontextprotocol/server'
import { SeamError } from '../../errors.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import type { ClientRoot, QuestionAnswer, QuestionRequest, RootsRequest, SampleRequest, SampleResult } from '../../seams/questions.js'
import type { QuestionPort } from '../../seams/types.js'
import type { SealedStateCodec } from './sealed-state.js'
import type { RunningCall } from './task-after-input.js'
import { argumentsDigest } from './serve-rounds.js'
import { type ClientAsks, questionForm, samplingParams } from './serve-question.js'

/** What the `requestState` of a held call's round carries, sealed: which call, which round, for which tool and arguments. */
export interface HeldRoundState {
  readonly held: string
  readonly round: number
  readonly name: string
  readonly arguments: string
}

/**
 * How long a held call's requests are collected before its round is sent: several asked together
 * (`Promise.all`) each journal their question first, which with a durable journal takes a commit
 * each, so "together" is "within this long of each other".
 */
const QUIET_MS = 15
/** How long a call that settled with nobody waiting keeps its outcome for a late retry of its last round. */
const KEEP_SETTLED_MS = 60_000
/**
 * How long a request of a call that may become a task (`taskStarts: 'after-input'`) waits for the
 * body to ask: a body not asking by then (or done) is a task. Longer than `QUIET_MS`, since a call's
 * first question comes after its start is journaled.
 */
const TASK_AFTER_MS = 100

/** What a request of a held call answers: the call's outcome, a round asking the client, or the task it became. */
export type HeldAnswer = { readonly outcome: ToolCallOutcome } | { readonly round: CallToolResult } | { readonly task: CallToolResult }

/** Makes a held call that stopped asking a task (`TaskAfterInput.become`): its `CreateTaskResult`. */
export type BecomeTask = (running: RunningCall) => Promise<CallToolResult>

type Pending = {
  readonly method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list'
  readonly params: Record<string, unknown>
  readonly resolve: (reply: unknown) => void
}

/** One call held in this process between the rounds of its 2026-07-28 request. */
class Held {
  readonly id = randomUUID()
  readonly controller = new AbortController()
  readonly pending = new Map<string, Pending>()
  round = 0
  /** The body's run (set as it starts). */
  outcome: Promise<ToolCallOutcome> | undefined
  settled: { readonly outcome: ToolCallOutcome } | { readonly fault: unknown } | undefined
  /** Wakes the request waiting for the next round or the outcome. */
  wake: (() => void) | undefined
  #quiet: NodeJS.Timeout | undefined

  constructor(
    readonly name: string,
    readonly digest: string,
    readonly becomeTask: BecomeTask | undefined,
  ) {}

  /** A request was asked: the round waits until none has come for `QUIET_MS`. */
  asked(): void {
    if (this.#quiet !== undefined) clearTimeout(this.#quiet)
    this.#quiet = setTimeout(() => {
      this.#quiet = undefined
      this.wake?.()
    }, QUIET_MS)
  }

  get ready(): boolean {
    return this.settled !== undefined || (this.pending.size > 0 && this.#quiet === undefined)
  }
}

/**
 * `ctx.ask`, `ctx.sample` and `ctx.roots` on a 2026-07-28 request (SEP-2322's multi round-trip
 * requests), where the server cannot send the client a request of its own: the call runs in this
 * process, its requests are collected, and the `tools/call` is answered with an `input_required`
 * result holding every one the body has outstanding and a sealed `requestState`. The body keeps
 * waiting; the client's retry (same tool, same arguments, the state, its `inputResponses`) hands it
 * the answers, and is answered with the outcome or the next round (a new state each round).
 *
 * The call is held by this process alone: a retry that reaches another (a restart, another host
 * behind a balancer) is refused with `-32602` saying so. A call that must survive that is a task
 * (`defineTool({ task })`), whose questions are stored in the journal. A retry that never comes is
 * the body's question deadline: the question is answered `cancel` (a request rejects) and the call
 * settles as it would, journaled once. A call started with `becomeTask`
 * (`taskStarts: 'after-input'`) becomes a task once a request finds its body done or not asking.
 */
export class HeldCalls {
  readonly #codec: SealedStateCodec<unknown>
  readonly #held = new Map<string, Held>()

  constructor(codec: SealedStateCodec<unknown>) {
    this.#codec = codec
  }

  /** The state of a held call's retry, when this request is one (another kind of state is `undefined`). */
  state(ctx: ServerContext, name: string): HeldRoundState | undefined {
    const state = ctx.mcpReq.requestState<HeldRoundState | undefined>()
    if (typeof state !== 'object' || state === null || typeof (state as { held?: unknown }).held !== 'string') return undefined
    if (state.name !== name) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'the requestState does not belong to a call of this tool')
    return state
  }

  /**
   * Starts a call that may ask: `run` gets the call's signal (its own: the call outlives the request)
   * and the port its requests go through (`asks`: what the client declared; a question it cannot
   * answer is declined, a request refused).
   */
  start(
    run: (signal: AbortSignal, question: QuestionPort) => Promise<ToolCallOutcome>,
    name: string,
    args: unknown,
    asks: ClientAsks,
    signal: AbortSignal,
    becomeTask?: BecomeTask,
  ): Promise<HeldAnswer> {
    const held = new Held(name, argumentsDigest(args), becomeTask)
    this.#held.set(held.id, held)
    held.outcome = run(held.controller.signal, portOf(held, asks))
    held.outcome.then(
      (outcome) => this.#settle(held, { outcome }),
      (fault: unknown) => this.#settle(held, { fault }),
    )
    return this.#next(held, signal)
  }

  /** A retry: its `inputResponses` go to the waiting body, then it waits for the outcome or the next round. */
  retry(state: HeldRoundState, ctx: ServerContext, args: unknown): Promise<HeldAnswer> {
    const held = this.#held.get(state.held)
    if (held === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'HELD_CALL_UNKNOWN: the call this requestState continues is not held by this server process (it settled long ago, the server restarted, or the retry reached another host). Call the tool again; a call that must survive across hosts is a task.',
        { code: 'HELD_CALL_UNKNOWN' },
      )
    }
    if (state.round !== held.round) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `this requestState is of round ${state.round} of the call, which is at round ${held.round}`)
    if (state.arguments !== argumentsDigest(args)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `ARGUMENTS_CHANGED: this retry of "${held.name}" carries other arguments than the call it continues; nothing was answered.`, {
        code: 'APPROVAL_ARGUMENTS_CHANGED',
      })
    }
    const responses = (ctx.mcpReq.inputResponses ?? {}) as Record<string, unknown>
    for (const [key, pending] of [...held.pending]) {
      if (!Object.hasOwn(responses, key)) continue
      held.pending.delete(key)
      pending.resolve(responses[key])
    }
    return this.#next(held, ctx.mcpReq.signal)
  }

  /** Aborts every held call (the server is closing); their outcomes settle as aborted. */
  close(): void {
    for (const held of this.#held.values()) held.controller.abort(new Error('the server is closing'))
  }

  #settle(held: Held, settled: NonNullable<Held['settled']>): void {
    held.settled = settled
    if (held.wake) held.wake()
    else setTimeout(() => this.#held.delete(held.id), KEEP_SETTLED_MS).unref()
  }

  /**
   * Waits (under the request's `signal`, which aborts the call) for the outcome or a round; a call
   * that may become a task is one when it settles or has not asked within `TASK_AFTER_MS`.
   */
  async #next(held: Held, signal: AbortSignal): Promise<HeldAnswer> {
    const abort = () => held.controller.abort(signal.reason)
    signal.addEventListener('abort', abort, { once: true })
    let idle = false
    const window =
      held.becomeTask === undefined
        ? undefined
        : setTimeout(() => {
            idle = true
            held.wake?.()
          }, TASK_AFTER_MS)
    try {
      while (!held.ready && !(idle && held.pending.size === 0)) await new Promise<void>((resolve) => (held.wake = resolve))
    } finally {
      clearTimeout(window)
      held.wake = undefined
      signal.removeEventListener('abort', abort)
    }
    const settled = held.settled
    if (held.becomeTask !== undefined && held.outcome !== undefined && (settled !== undefined || held.pending.size === 0)) {
      // The body runs on as the task's run; a retry of this round's state finds no held call.
      this.#held.delete(held.id)
      return { task: await held.becomeTask({ outcome: held.outcome, abort: (reason) => held.controller.abort(reason) }) }
    }
    if (settled !== undefined) {
      this.#held.delete(held.id)
      if ('fault' in settled) throw settled.fault
      return settled
    }
    held.round += 1
    const state: HeldRoundState = { held: held.id, round: held.round, name: held.name, arguments: held.digest }
    const inputRequests = Object.fromEntries([...held.pending].map(([key, pending]) => [key, { method: pending.method, params: pending.params }]))
    const result: InputRequiredResult = inputRequired({ inputRequests: inputRequests as InputRequiredResult['inputRequests'], requestState: this.#codec.mint(state) })
    // The SDK's tools/call handler type is the complete result; on a 2026 request it also accepts this one.
    return { round: result as unknown as CallToolResult }
  }
}

/** The port a held call's requests go through: each becomes a pending input request of its next round. */
function portOf(held: Held, asks: ClientAsks): QuestionPort {
  const ask = <T>(method: Pending['method'], request: { questionId: string; key?: string; signal: AbortSignal }, params: Record<string, unknown>, map: (reply: unknown) => T) =>
    new Promise<T>((resolve, reject) => {
      let key = request.key ?? request.questionId
      // Two requests the body named alike are told apart: each answer must find its own request.
      for (let n = 2; held.pending.has(key); n += 1) key = `${request.key ?? request.questionId}-${n}`
      const gone = () => {
        held.pending.delete(key)
        reject(request.signal.reason)
      }
      request.signal.addEventListener('abort', gone, { once: true })
      held.pending.set(key, {
        method,
        params,
        resolve: (reply) => {
          request.signal.removeEventListener('abort', gone)
          try {
            resolve(map(reply))
          } catch (error) {
            reject(error)
          }
        },
      })
      held.asked()
    })
  return {
    elicit: (request: QuestionRequest): Promise<QuestionAnswer> => {
      if (!asks.elicit) return Promise.resolve({ action: 'decline' })
      return ask('elicitation/create', request, { ...questionForm(request) }, (reply) => reply as QuestionAnswer)
    },
    sample: (request: SampleRequest): Promise<SampleResult> => {
      if (!asks.sample) return Promise.reject(notDeclared('sampling'))
      return ask('sampling/createMessage', request, samplingParams(request), (reply) => reply as SampleResult)
    },
    roots: (request: RootsRequest): Promise<readonly ClientRoot[]> => {
      if (!asks.roots) return Promise.reject(notDeclared('roots'))
      return ask('roots/list', request, {}, (reply) => {
        const roots = (reply as { roots?: unknown } | null)?.roots
        if (!Array.isArray(roots)) throw new Error('the client answered roots/list without a list of roots')
        return roots as ClientRoot[]
      })
    },
  }
}

function notDeclared(capability: string): SeamError {
  return new SeamError('CLIENT_UNSUPPORTED', `the MCP client did not declare the ${capability} capability in this request's _meta`)
}

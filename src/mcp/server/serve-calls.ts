import { performance } from 'node:perf_hooks'
import {
  type CallToolRequestParams,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type CallToolResult,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server'
import { context, trace } from '@opentelemetry/api'
import { messageOf, SeamError } from '../../errors.js'
import { redactText, scrubValues } from '../../runtime/base/redact.js'
import type { ApprovalPort } from '../../seams/approval.js'
import type { Root } from '../../runtime/root.js'
import { traceContextOf } from '../../seams/trace.js'
import type { ProgressEvent, ToolCall, ToolCallOutcome } from '../../seams/calls.js'
import type { QuestionPort } from '../../seams/types.js'
import { firstAnswer } from '../../runtime/approvals/first-answer.js'
import { elicitationApproval } from './serve-approval.js'
import { type ClientAsks, clientAsks, questionPortFor } from './serve-question.js'
import { type HeldAnswer, HeldCalls, type HeldRoundState } from './serve-held.js'
import { argumentsChanged, callIdOf, checkNeeds, logTo, outcomeAttributes, printable, progressSender } from './serve-call-wire.js'
import { type McpCatalog, toCallToolResult } from './serve-mapping.js'
import { type ApprovalRounds, type ApprovalRoundState, argumentsDigest } from './serve-rounds.js'
import type { SessionTurns } from './serve-turns.js'
import { TaskAfterInput } from './task-after-input.js'
import { declaresTasks, McpTasks, tasksRequired } from './tasks.js'
import { contextFromMeta, endRequestSpan, startRequestSpan } from '../trace-context.js'

/**
 * The `tools/call` path of a bridge's sessions: a call runs under its request, continues an approval
 * round or a held call's round (2026-07-28), or becomes a task; the request answers with its result,
 * its next round or the task's handle.
 */

/** What the call path needs of the bridge that serves it. */
export interface CallsHost {
  readonly root: Root
  /** Who the calls run as (a task keeps it). */
  readonly subjectId: string
  /** The configured approval port (the console): asked beside the client, or alone. */
  readonly approval: ApprovalPort | undefined
  readonly rounds: ApprovalRounds
  readonly log: (line: string) => void
  /** Whether a line per call is logged (its duration is measured only then). */
  readonly verbose: boolean
  catalog(): Promise<McpCatalog>
  /** Whether `server`'s client declared form elicitation at its handshake. */
  elicits(server: Server): boolean
  /** New turns of `session`, as the bridge's principal, owner and origin. */
  turns(session: string): SessionTurns
  /** A closing the bridge's `close()` waits for. */
  track(closing: Promise<void>): void
  endSession(session: string): void
}

/** How `ServedCalls.#answer` continues or runs a call. */
interface AnswerHow {
  readonly round: ApprovalRoundState | undefined
  readonly held: HeldRoundState | undefined
  readonly approval: ApprovalPort | undefined
  readonly onProgress: ((event: ProgressEvent) => void) | undefined
  /** A call that runs held until it stops asking, then is a task (`taskStarts: 'after-input'`): what its client can be asked. */
  readonly afterInput?: ClientAsks | undefined
}

/** The client capabilities a 2026-07-28 request's envelope declares. */
function envelopeCapabilities(ctx: ServerContext): ClientCapabilities | undefined {
  return (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined
}

/** Every `tools/call` a bridge serves, and the held calls and tasks they leave behind (`close()` ends those). */
export class ServedCalls {
  readonly #host: CallsHost
  readonly #root: Root
  readonly #log: (line: string) => void
  readonly #verbose: boolean
  readonly #rounds: ApprovalRounds
  readonly #held: HeldCalls
  readonly #tasks: McpTasks
  /** `tools/call` requests being served, and who waits for there to be none. */
  #active = 0
  #idle: (() => void) | undefined
  /** Numbers the calls this bridge served: JSON-RPC ids are the client's and may repeat. */
  #callCount = 0

  constructor(host: CallsHost) {
    this.#host = host
    this.#root = host.root
    this.#log = host.log
    this.#verbose = host.verbose
    this.#rounds = host.rounds
    this.#held = new HeldCalls(this.#rounds.codec)
    this.#tasks = new McpTasks(host.root, (session, callId, token, signal, approval, question) => this.#resumeTask(session, callId, token, signal, approval, question), this.#log)
  }

  /** The `tools/call` requests being answered now. */
  get active(): number {
    return this.#active
  }

  /** Settles when the count of requests being answered next reaches zero. */
  idle(): Promise<void> {
    return new Promise<void>((resolve) => (this.#idle = resolve))
  }

  /** Registers the task methods (`tasks/get`, `tasks/update`, `tasks/cancel`) on a session's server. */
  register(server: Server): void {
    this.#tasks.register(server)
  }

  /** Aborts the held calls and the calls this host runs for tasks (see `McpTasks.close`). */
  async close(): Promise<void> {
    this.#held.close()
    await this.#tasks.close()
  }

  /** Answers one `tools/call` of `server`'s session, whose calls run in `turns`. */
  async call(server: Server, turns: SessionTurns, params: CallToolRequestParams, ctx: ServerContext): Promise<CallToolResult> {
    const started = this.#verbose ? performance.now() : 0
    // The trace context rides with the call as well: the body and mounted servers get it without an SDK.
    const carried = traceContextOf(params._meta)
    const call: ToolCall = {
      callId: callIdOf(++this.#callCount, ctx.mcpReq.id),
      name: params.name,
      arguments: params.arguments ?? {},
      ...(carried ? { trace: carried } : {}),
      log: logTo(ctx),
    }
    const catalog = await this.#host.catalog().catch(() => undefined)
    checkNeeds(server, params.name, catalog?.needs.get(params.name))
    // A 2026-07-28 request carries its envelope; it may be the retry of an approval round or of a held call's round.
    const modern = ctx.mcpReq.envelope !== undefined
    const held = modern ? this.#held.state(ctx, params.name) : undefined
    const round = modern && held === undefined ? this.#rounds.state(ctx, params.name) : undefined
    const task = catalog?.tasks.get(params.name)
    let afterInput: ClientAsks | undefined
    if (task !== undefined && round === undefined && held === undefined) {
      if (declaresTasks(server, ctx, params._meta as Record<string, unknown> | undefined)) {
        const asks = clientAsks(envelopeCapabilities(ctx) ?? server.getClientCapabilities())
        // Held first only where rounds exist (2026-07-28) and the client can be asked something.
        if (!(modern && catalog?.tasksAfterInput.has(params.name) && (asks.elicit || asks.sample || asks.roots))) return this.#startTask(turns, call, asks)
        afterInput = asks
      } else if (task === 'required') throw tasksRequired(`The tool "${scrubValues(params.name)}"`)
    }
    // The parked call runs the arguments it was parked with: a retry carrying others would run what
    // its sender did not send, so it is refused before anything is decided.
    if (round !== undefined && round.arguments !== argumentsDigest(call.arguments)) throw argumentsChanged(params.name)
    const parking = modern && this.#rounds.canAsk(ctx) ? this.#rounds.parking() : undefined
    let answer: HeldAnswer
    // The request continues the trace its `_meta` carries; the call's execute_tool span is a child of this one.
    const parent = contextFromMeta(params._meta)
    const span = startRequestSpan('server', params.name, parent)
    // Counted rather than tracked as a promise each: `close()` waits for the count to reach zero.
    this.#active += 1
    try {
      const approval = parking?.port ?? this.#approvalFor(server, ctx)
      const onProgress = progressSender(ctx)
      answer = await context.with(trace.setSpan(parent, span), () => this.#answer(server, turns, call, ctx, { round, held, approval, onProgress, afterInput }))
      if ('task' in answer) endRequestSpan(span, undefined, { 'seam.outcome.status': 'task' })
      else if ('outcome' in answer) endRequestSpan(span, answer.outcome.status === 'failed' ? (answer.outcome.code ?? 'TOOL_ERROR') : undefined, outcomeAttributes(answer.outcome))
      else endRequestSpan(span, undefined, { 'seam.outcome.status': 'input_required' })
    } catch (error) {
      endRequestSpan(span, 'internal_error')
      if (error instanceof ProtocolError) throw error
      throw new ProtocolError(ProtocolErrorCode.InternalError, `the runtime could not run the call: ${redactText(messageOf(error))}`)
    } finally {
      this.#active -= 1
      if (this.#active === 0 && this.#idle) {
        this.#idle()
        this.#idle = undefined
      }
    }
    if ('round' in answer) return answer.round
    if ('task' in answer) return answer.task
    const { outcome } = answer
    if (this.#verbose) {
      const code = outcome.code ? ` ${outcome.code}` : ''
      this.#log(`tools/call ${printable(params.name)} → ${outcome.status}${code} (${Math.round(performance.now() - started)} ms)`)
    }
    // The specification answers a call to a tool it does not know with a protocol error, not a result.
    if (outcome.status === 'failed' && outcome.code === 'UNKNOWN_TOOL') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${scrubValues(params.name)}`)
    const question = parking?.question()
    if (outcome.status === 'suspended' && outcome.resumeToken !== undefined && question !== undefined) {
      return this.#rounds.ask(question, outcome.resumeToken, ctx, call.arguments)
    }
    return toCallToolResult(outcome)
  }

  /**
   * What the call answers with: the resumed parked call (an approval round's retry), the held call's
   * next round or outcome (its round's retry, or a 2026-07-28 call whose client can be asked
   * something: see `HeldCalls`), or the call run under the request (asking, on a 2025-era
   * connection, through `elicitation/create`, `sampling/createMessage` and `roots/list`).
   */
  #answer(server: Server, turns: SessionTurns, call: ToolCall, ctx: ServerContext, how: AnswerHow): Promise<HeldAnswer> {
    const { round, held, approval, onProgress, afterInput } = how
    if (round !== undefined) return this.#resume(turns, round, ctx, approval, onProgress).then((outcome) => ({ outcome }))
    if (held !== undefined) return this.#held.retry(held, ctx, call.arguments)
    if (afterInput !== undefined) return this.#taskAfterInput(turns, call, afterInput, ctx.mcpReq.signal)
    const asks = ctx.mcpReq.envelope === undefined ? undefined : clientAsks(envelopeCapabilities(ctx))
    if (asks !== undefined && (asks.elicit || asks.sample || asks.roots)) {
      return this.#held.start((signal, question) => turns.run(call, signal, approval, onProgress, question), call.name, call.arguments, asks, ctx.mcpReq.signal)
    }
    return turns.run(call, ctx.mcpReq.signal, approval, onProgress, questionPortFor(server, ctx)).then((outcome) => ({ outcome }))
  }

  /**
   * A call of a task-capable tool from a client that declared the tasks extension: a task (see
   * `McpTasks`), its call running in this session's turn but under its own signal, so a dropped
   * request does not cancel it.
   */
  #startTask(turns: SessionTurns, call: ToolCall, asks: ClientAsks): Promise<CallToolResult> {
    const { log: _log, ...detached } = call
    return this.#tasks.start((signal, approval, question) => turns.run(detached, signal, approval, undefined, question), {
      session: turns.session,
      subjectId: this.#host.subjectId,
      name: call.name,
      asks,
    })
  }

  /**
   * A call of a `taskStarts: 'after-input'` tool: held (its questions in `input_required` rounds)
   * until a request finds it not asking, which answers with the task its running body becomes.
   * Detached from the request from the start, as a task's call is.
   */
  #taskAfterInput(turns: SessionTurns, call: ToolCall, asks: ClientAsks, signal: AbortSignal): Promise<HeldAnswer> {
    const { log: _log, ...detached } = call
    const owner = { session: turns.session, subjectId: this.#host.subjectId, name: call.name, asks }
    const after = new TaskAfterInput((run) => this.#tasks.start(run, owner))
    const run = after.held((callSignal, approval, question) => turns.run(detached, callSignal, approval, undefined, question))
    return this.#held.start(run, call.name, call.arguments, asks, signal, (running) => after.become(running))
  }

  /** A task's parked call, resumed in a turn of the session it parked in (on whichever host took the answer). */
  async #resumeTask(session: string, callId: string, token: string, signal: AbortSignal, approval: ApprovalPort, question: QuestionPort): Promise<ToolCallOutcome> {
    const turns = this.#host.turns(session)
    try {
      return await turns.resume(callId, token, signal, approval, undefined, question)
    } finally {
      this.#host.track(turns.close())
    }
  }

  /**
   * The retry of an approval round: the user's reply decides the parked call (a decision already
   * made elsewhere stands; a reply past the call's deadline finds it expired), then the call
   * continues in this session's live turn, which answers with the result that stands.
   */
  async #resume(
    turns: SessionTurns,
    round: ApprovalRoundState,
    ctx: ServerContext,
    approval: ApprovalPort | undefined,
    onProgress: ((event: ProgressEvent) => void) | undefined,
  ): Promise<ToolCallOutcome> {
    try {
      await this.#root.approvals.decide(round.token, this.#rounds.answer(ctx, round), { by: 'mcp client' })
    } catch (error) {
      if (!(error instanceof SeamError && (error.code === 'APPROVAL_CONFLICT' || error.code === 'APPROVAL_EXPIRED'))) throw error
    }
    // The round's state is sealed (encrypted and authenticated) for the request that parked the
    // call, so its retry continues that request's session: a 2026-07-28 request is a session of its
    // own, and a resume is bound to the parked call's session.
    const [parked] = await this.#root.journal.coordination.parked({ token: round.token, settled: true }).catch(() => [])
    const own = parked !== undefined && parked.session !== turns.session ? this.#host.turns(parked.session) : turns
    try {
      return await own.resume(round.callId, round.token, ctx.mcpReq.signal, approval, onProgress)
    } finally {
      if (own !== turns) this.#host.track(own.close())
      this.#host.track(this.#endParkedSession(turns, round.token))
    }
  }

  /**
   * A 2026-07-28 HTTP request is a session of its own, so the call it parked is resumed by another
   * request's session: a grant the reply gave it is the parking request's, which has ended, so it
   * ends too. (On stdio the parking session is this one, and lives on.)
   */
  async #endParkedSession(turns: SessionTurns, token: string): Promise<void> {
    const [parked] = await this.#root.journal.coordination.parked({ token, settled: true }).catch(() => [])
    if (parked !== undefined && parked.session !== turns.session) this.#host.endSession(parked.session)
  }

  /**
   * Fail closed: the client is asked only when it declared form elicitation on a 2025-era connection
   * (a 2026-07-28 request is asked through `input_required` rounds instead); the configured
   * `approval` port (the console) is asked too, or alone, and the first answer wins.
   */
  #approvalFor(server: Server, ctx: ServerContext): ApprovalPort | undefined {
    const fallback = this.#host.approval
    if (!this.#host.elicits(server) || ctx.mcpReq.envelope !== undefined) return fallback
    // `send` relates the question to the call, so over HTTP it travels on the call's own stream.
    const client = elicitationApproval((params, options) => ctx.mcpReq.send({ method: 'elicitation/create', params }, options))
    return fallback ? firstAnswer([client, fallback]) : client
  }
}

import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { createRequire } from 'node:module'
import {
  type CallToolRequestParams,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type CallToolResult,
  type McpServerFactory,
  type Prompt,
  ProtocolError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType,
  ProtocolErrorCode,
  Server,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server'
import { context, trace } from '@opentelemetry/api'
import { messageOf, SeamError } from '../../errors.js'
import { redactText, scrubValues } from '../../runtime/base/redact.js'
import type { ApprovalPort } from '../../seams/approval.js'
import type { Root } from '../../runtime/root.js'
import { traceContextOf } from '../../seams/trace.js'
import type { ProgressEvent, ToolCall, ToolCallOutcome } from '../../seams/calls.js'
import { createTurnIngress } from '../../runtime/turns/turn-ingress.js'
import { boundTemplate, readResource } from '../../runtime/generations/resource-read.js'
import { versionKey } from '../../runtime/generations/resource-slots.js'
import type { QuestionPort, TurnEnvelope, TurnOrigin } from '../../seams/types.js'
import type { McpServeOptions } from './serve-options.js'
import { firstAnswer } from '../../runtime/approvals/first-answer.js'
import { elicitationApproval, supportsFormElicitation } from './serve-approval.js'
import { type ClientAsks, clientAsks, questionPortFor } from './serve-question.js'
import { type HeldAnswer, HeldCalls, type HeldRoundState } from './serve-held.js'
import { argumentsChanged, callIdOf, checkNeeds, logTo, outcomeAttributes, printable, progressSender } from './serve-call-wire.js'
import { type McpCatalog, toCallToolResult, toCatalog } from './serve-mapping.js'
import { ApprovalRounds, type ApprovalRoundState, argumentsDigest } from './serve-rounds.js'
import { SessionTurns } from './serve-turns.js'
import { getPrompt } from './serve-prompt-asks.js'
import { answerCompletion, type CompletionAnswer, type CompletionRequest } from './serve-completion.js'
import { TaskAfterInput } from './task-after-input.js'
import { declaresTasks, McpTasks, TASKS_EXTENSION, tasksRequired } from './tasks.js'
import { endSessionGrants } from './session-end.js'
import { contextFromMeta, endRequestSpan, startRequestSpan } from '../trace-context.js'

const VERSION: string = createRequire(import.meta.url)('../../../package.json').version
const ORIGIN: TurnOrigin = Object.freeze({ kind: 'mcp' })
const DEFAULT_PRINCIPAL = Object.freeze({ subjectId: 'mcp', roles: Object.freeze([]) as readonly string[] })

/** Which served lists a publish changed. */
export interface CatalogChange {
  readonly tools: boolean
  readonly prompts: boolean
  readonly resources: boolean
  /** Listed resources whose content changed or that went away (`resources/updated` to subscribers). */
  readonly updated: readonly string[]
}

/** How `McpBridge.#answer` continues or runs a call. */
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

/**
 * The live generation as MCP servers: one SDK `Server` per MCP session (or per request, for the
 * stateless 2026-07-28 HTTP mode), all sharing one catalog cache and one subscription to the
 * root's publishes. Both protocol eras are served by the same servers: 2025-11-25 (`initialize`,
 * approval through `elicitation/create`, unsolicited `list_changed`) and 2026-07-28 (per-request
 * envelope, approval through `input_required` rounds, changes on `subscriptions/listen` streams).
 *
 * Every `tools/call` runs on the generation live when it arrives, in its session's turn for that
 * generation (see `SessionTurns`), with the MCP request's abort signal as the call's signal, so
 * `notifications/cancelled` aborts exactly that call.
 */
export class McpBridge {
  readonly #root: Root
  readonly #owner: string
  readonly #principal: { subjectId: string; roles?: readonly string[] }
  readonly #session: string | undefined
  readonly #log: (line: string) => void
  readonly #verbose: boolean
  readonly #approval: ApprovalPort | undefined
  /** Every session's server, and the subset that finished the handshake (announcements go there). */
  readonly #servers = new Map<Server, SessionTurns>()
  readonly #ready = new Set<Server>()
  /** The sessions whose client declared form elicitation (approval questions can be asked there). */
  readonly #elicits = new WeakSet<Server>()
  /** The URIs each 2025-era session subscribed to with `resources/subscribe`. */
  readonly #subscriptions = new WeakMap<Server, Set<string>>()
  /** 2026-07-28 servers: their subscriptions are the SDK's (`subscriptions/listen` filters), which it applies. */
  readonly #modern = new WeakSet<Server>()
  /** The listeners told of each publish that changed the served lists (the HTTP `subscriptions/listen` bus). */
  readonly #changeListeners = new Set<(change: CatalogChange) => void>()
  readonly #rounds: ApprovalRounds
  readonly #held: HeldCalls
  readonly #tasks: McpTasks
  /** Session closes still running; `close()` waits for them (and so for their turns' calls). */
  readonly #closes = new Set<Promise<void>>()
  /** `tools/call` requests being served, and who waits for there to be none. */
  #active = 0
  #idle: (() => void) | undefined
  /** Numbers the calls this bridge served: JSON-RPC ids are the client's and may repeat. */
  #callCount = 0
  readonly #listing: TurnEnvelope
  readonly #unsubscribe: () => void
  #catalog: { generation: number; value: Promise<McpCatalog> } | undefined
  #announced: Promise<McpCatalog | undefined>
  #closing: Promise<void> | undefined

  constructor(root: Root, options: McpServeOptions = {}) {
    this.#root = root
    this.#owner = options.owner ?? 'root'
    this.#principal = options.principal ?? DEFAULT_PRINCIPAL
    this.#session = options.session
    this.#approval = options.approval
    this.#rounds = new ApprovalRounds(options.requestStateKey)
    this.#held = new HeldCalls(this.#rounds.codec)
    const log = options.log
    this.#verbose = log !== undefined
    this.#log = log
      ? (line) => {
          try {
            log(line)
          } catch {
            // A failing log sink never fails a call.
          }
        }
      : () => {}
    // What `tools/list` filters with: the same principal, owner and origin as a call's turn.
    this.#listing = createTurnIngress({
      session: this.#session ?? 'mcp',
      principal: this.#principal,
      owner: this.#owner,
      origin: ORIGIN,
      signal: new AbortController().signal,
      journal: root.journal,
      unattended: true,
    })
    this.#tasks = new McpTasks(root, (session, callId, token, signal, approval, question) => this.#resumeTask(session, callId, token, signal, approval, question), this.#log)
    this.#announced = this.catalog().catch(() => undefined)
    this.#unsubscribe = root.on('generation', () => {
      for (const turns of this.#servers.values()) turns.retireStale()
      this.#publish()
    })
  }

  /**
   * The seam session of one MCP session (a stdio connection, a 2025 HTTP session id, a 2026-07-28
   * HTTP request): the configured one, else `mcp:<id>`, a session of its own that ends with it.
   */
  sessionFor(mcpSessionId: string = randomUUID()): string {
    return this.#session ?? `mcp:${mcpSessionId}`
  }

  /**
   * The MCP session `session` ended: its session grants end with it (a configured session is shared
   * on purpose and keeps them). `close()` waits for it.
   */
  endSession(session: string): void {
    if (this.#session !== undefined) return
    this.#track(endSessionGrants(this.#root, session, this.#log))
  }

  #track(closing: Promise<void>): void {
    this.#closes.add(closing)
    void closing.finally(() => this.#closes.delete(closing))
  }

  /** The live generation's catalog, projected once per generation number. */
  catalog(): Promise<McpCatalog> {
    let generation: Root['activeGeneration']
    try {
      generation = this.#root.activeGeneration
    } catch (error) {
      return Promise.reject(new ProtocolError(ProtocolErrorCode.InternalError, `the runtime is not serving: ${redactText(messageOf(error))}`))
    }
    const cached = this.#catalog
    if (cached?.generation === generation.number) return cached.value
    const listed = generation
    const versions = new Map(generation.resources.map((slot) => [slot.uri, versionKey(slot)]))
    const value = this.#root.ingress
      .read(generation, this.#owner, this.#listing)
      .then((capabilities) => toCatalog(this.#root.withCodeMode(capabilities, listed), versions))
    this.#catalog = { generation: generation.number, value }
    value.catch(() => {
      if (this.#catalog?.value === value) this.#catalog = undefined
    })
    return value
  }

  /**
   * A factory for `serveStdio`: each instance it makes is one connection's server (the SDK also
   * makes one for a 2026 `server/discover` probe and closes it again if the client falls back).
   */
  factory(session: string): McpServerFactory {
    return ({ era }) => this.open(session, undefined, era)
  }

  /**
   * A factory for the stateless 2026-07-28 HTTP mode: a server per request. Nothing identifies a
   * client across requests (its `clientInfo` is self-declared and the same for every copy of it),
   * so each request is a session of its own (unless one is configured): a session grant given in
   * it ends with it, and its calls run in a turn that ends with it.
   */
  statelessFactory(): McpServerFactory {
    return () => {
      const session = this.sessionFor()
      const turns = this.#turns(session)
      const server = this.#server(turns)
      server.onclose = () => {
        if (turns.begun) this.#track(turns.close().then(() => this.endSession(session)))
      }
      return server
    }
  }

  /** Called after every publish that changed the served lists; returns a disposer. */
  onChange(listener: (change: CatalogChange) => void): () => void {
    this.#changeListeners.add(listener)
    return () => this.#changeListeners.delete(listener)
  }

  /**
   * A server for one MCP session; `session` is the seam session its calls run in. A 2026-era
   * server (`era: 'modern'`) has no handshake: it hears publishes from the start.
   */
  open(session: string, onClose?: () => void, era: 'legacy' | 'modern' = 'legacy'): Server {
    const turns = this.#turns(session)
    const server = this.#server(turns)
    server.oninitialized = () => {
      // The client's capabilities are fixed by the handshake: looked at once, not on every call.
      if (supportsFormElicitation(server.getClientCapabilities())) this.#elicits.add(server)
      if (this.#servers.has(server)) this.#ready.add(server)
    }
    server.onclose = () => {
      this.#servers.delete(server)
      this.#ready.delete(server)
      this.#track(turns.close())
      onClose?.()
    }
    this.#servers.set(server, turns)
    if (era === 'modern') {
      this.#ready.add(server)
      this.#modern.add(server)
    }
    return server
  }

  #turns(session: string): SessionTurns {
    return new SessionTurns(this.#root, { session, principal: this.#principal, owner: this.#owner, origin: ORIGIN }, this.#log)
  }

  #server(turns: SessionTurns): Server {
    const server = new Server(
      { name: 'seam-runtime', version: VERSION },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          completions: {},
          logging: {},
          extensions: { [TASKS_EXTENSION]: {} },
        },
        requestState: { verify: this.#rounds.verify },
      },
    )
    server.setRequestHandler('tools/list', async () => ({ tools: (await this.catalog()).tools as Tool[] }))
    server.setRequestHandler('tools/call', (request, ctx) => this.#call(server, turns, request.params, ctx))
    server.setRequestHandler('prompts/list', async () => ({ prompts: (await this.catalog()).prompts as Prompt[] }))
    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const skill = (await this.catalog()).skills.get(request.params.name)
      if (!skill) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${scrubValues(request.params.name)}`)
      return getPrompt(skill, request.params.arguments, ctx, { elicits: this.#elicits.has(server), codec: this.#rounds.codec, root: this.#root, owner: this.#owner })
    })
    server.setRequestHandler('resources/list', async () => ({ resources: (await this.catalog()).resources as Resource[] }))
    server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: (await this.catalog()).resourceTemplates as ResourceTemplateType[] }))
    server.setRequestHandler('resources/read', (request, ctx) => this.#read(request.params.uri, ctx.mcpReq.signal))
    server.setRequestHandler('resources/subscribe', async (request) => {
      const uris = this.#subscriptions.get(server) ?? new Set<string>()
      this.#subscriptions.set(server, uris)
      uris.add(request.params.uri)
      return {}
    })
    server.setRequestHandler('resources/unsubscribe', async (request) => {
      this.#subscriptions.get(server)?.delete(request.params.uri)
      return {}
    })
    server.setRequestHandler('completion/complete', (request, ctx) => this.#complete(request.params, ctx.mcpReq.signal))
    this.#tasks.register(server)
    return server
  }

  /**
   * Reads a resource in the live generation, as the served owner sees it. A URI that is neither
   * listed nor matched by a template is `-32602` with the URI in `data`, as the specification gives.
   */
  async #read(uri: string, signal: AbortSignal): Promise<ReadResourceResult> {
    await this.catalog()
    const generation = this.#root.activeGeneration
    await this.#root.ingress.project(generation, this.#owner)
    let read: Awaited<ReturnType<typeof readResource>>
    try {
      read = await readResource(generation, this.#owner, uri, signal)
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, `reading ${scrubValues(uri)} failed: ${redactText(messageOf(error))}`)
    }
    if (read === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource not found: ${scrubValues(uri)}`, { uri })
    return { contents: read.contents }
  }

  /** `completion/complete` (`answerCompletion`) against the live generation, as the served owner sees it. */
  #complete(request: CompletionRequest, signal: AbortSignal): Promise<CompletionAnswer> {
    return answerCompletion(request, {
      skills: async () => (await this.catalog()).skills,
      template: async (uriTemplate) => {
        await this.catalog()
        const generation = this.#root.activeGeneration
        await this.#root.ingress.project(generation, this.#owner)
        return boundTemplate(generation, this.#owner, uriTemplate)
      },
      log: this.#log,
    }, signal)
  }

  /** Stops announcing, closes every session (aborting their calls) and waits for the calls to settle. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#unsubscribe()
      this.#held.close()
      await this.#tasks.close()
      await Promise.allSettled([...this.#servers.keys()].map((server) => server.close()))
      while (this.#closes.size > 0 || this.#active > 0) {
        if (this.#closes.size > 0) await Promise.allSettled([...this.#closes])
        else await new Promise<void>((resolve) => (this.#idle = resolve))
      }
    })()
    return this.#closing
  }

  async #call(server: Server, turns: SessionTurns, params: CallToolRequestParams, ctx: ServerContext): Promise<CallToolResult> {
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
    const catalog = await this.catalog().catch(() => undefined)
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
      subjectId: this.#principal.subjectId,
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
    const owner = { session: turns.session, subjectId: this.#principal.subjectId, name: call.name, asks }
    const after = new TaskAfterInput((run) => this.#tasks.start(run, owner))
    const run = after.held((callSignal, approval, question) => turns.run(detached, callSignal, approval, undefined, question))
    return this.#held.start(run, call.name, call.arguments, asks, signal, (running) => after.become(running))
  }

  /** A task's parked call, resumed in a turn of the session it parked in (on whichever host took the answer). */
  async #resumeTask(session: string, callId: string, token: string, signal: AbortSignal, approval: ApprovalPort, question: QuestionPort): Promise<ToolCallOutcome> {
    const turns = this.#turns(session)
    try {
      return await turns.resume(callId, token, signal, approval, undefined, question)
    } finally {
      this.#track(turns.close())
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
    const own = parked !== undefined && parked.session !== turns.session ? this.#turns(parked.session) : turns
    try {
      return await own.resume(round.callId, round.token, ctx.mcpReq.signal, approval, onProgress)
    } finally {
      if (own !== turns) this.#track(own.close())
      this.#track(this.#endParkedSession(turns, round.token))
    }
  }

  /**
   * A 2026-07-28 HTTP request is a session of its own, so the call it parked is resumed by another
   * request's session: a grant the reply gave it is the parking request's, which has ended, so it
   * ends too. (On stdio the parking session is this one, and lives on.)
   */
  async #endParkedSession(turns: SessionTurns, token: string): Promise<void> {
    const [parked] = await this.#root.journal.coordination.parked({ token, settled: true }).catch(() => [])
    if (parked !== undefined && parked.session !== turns.session) this.endSession(parked.session)
  }

  /**
   * Fail closed: the client is asked only when it declared form elicitation on a 2025-era connection
   * (a 2026-07-28 request is asked through `input_required` rounds instead); the configured
   * `approval` port (the console) is asked too, or alone, and the first answer wins.
   */
  #approvalFor(server: Server, ctx: ServerContext): ApprovalPort | undefined {
    const fallback = this.#approval
    if (!this.#elicits.has(server) || ctx.mcpReq.envelope !== undefined) return fallback
    // `send` relates the question to the call, so over HTTP it travels on the call's own stream.
    const client = elicitationApproval((params, options) => ctx.mcpReq.send({ method: 'elicitation/create', params }, options))
    return fallback ? firstAnswer([client, fallback]) : client
  }

  /** Announces a publish to every ready session, once per change of the served lists. */
  #publish(): void {
    this.#announced = this.#announced.then(async (previous) => {
      let next: McpCatalog
      try {
        next = await this.catalog()
      } catch (error) {
        this.#log(`could not project the published generation: ${messageOf(error)}`)
        return previous
      }
      const tools = previous?.toolsText !== next.toolsText
      const prompts = previous?.promptsText !== next.promptsText
      const resources = previous?.resourcesText !== next.resourcesText
      const updated = previous === undefined ? [] : [...previous.resourceVersions].filter(([uri, version]) => next.resourceVersions.get(uri) !== version).map(([uri]) => uri)
      if ((tools || prompts || resources || updated.length > 0) && !this.#closing) {
        await Promise.allSettled(
          [...this.#ready].map(async (server) => {
            if (tools) await server.sendToolListChanged()
            if (prompts) await server.sendPromptListChanged()
            if (resources) await server.sendResourceListChanged()
            const subscribed = this.#subscriptions.get(server)
            for (const uri of updated) if (this.#modern.has(server) || subscribed?.has(uri)) await server.sendResourceUpdated({ uri })
          }),
        )
        for (const listener of this.#changeListeners) {
          try {
            listener({ tools, prompts, resources, updated })
          } catch (error) {
            this.#log(`could not announce the published generation: ${messageOf(error)}`)
          }
        }
        const what = [tools ? 'tools' : '', prompts ? 'prompts' : '', resources ? 'resources' : '', updated.length > 0 ? `${updated.length} resource update(s)` : ''].filter(Boolean).join(' and ')
        // Said only when someone is listening: `seam dev` prints every log line.
        if (this.#ready.size > 0) this.#log(`generation ${next.generation}: ${what} list_changed sent to ${this.#ready.size} session(s)`)
      }
      return next
    })
  }
}

import { context, ROOT_CONTEXT } from '@opentelemetry/api'
import { messageOf } from '../../errors.js'
import type { ApprovalPort, ApprovalRequest } from '../../seams/approval.js'
import type { ProgressEvent, ToolCall, ToolCallOutcome } from '../../seams/calls.js'
import type { ClientRoot, QuestionAnswer, QuestionRequest, RootsRequest, SampleRequest, SampleResult } from '../../seams/questions.js'
import { SeamError } from '../../errors.js'
import type { QuestionPort } from '../../seams/types.js'
import type { BeginTurnInput, Root } from '../../runtime/root.js'
import type { Turn } from '../../runtime/turns/turn.js'

export type SessionTurnInput = Omit<BeginTurnInput, 'signal' | 'ports' | 'unattended'>

/**
 * The turns of one MCP session: one turn per generation, begun by the first call that generation
 * serves. When a newer generation is published the old turn is ended as soon as its running calls
 * have settled, so it never holds a retired generation longer than they do.
 *
 * Why not one turn per call: `turn/begin` and `turn/end` are two more journal appends (two more
 * durable commits with SQLite) and a capability read on every call; a session turn pays them once.
 * Each call still gets its own abort signal (the MCP request's) through `execute`.
 */
export class SessionTurns {
  readonly #root: Root
  readonly #input: SessionTurnInput
  readonly #log: (line: string) => void
  /** The approval port of each running call, by call id: the turn's own port forwards to it. */
  readonly #ports = new Map<string, ApprovalPort>()
  /** The question port of each running call that can be asked, by call id (a tool's `ctx.ask`). */
  readonly #questions = new Map<string, QuestionPort>()
  readonly #ending = new Set<Promise<void>>()
  #current: { generation: number; turn: Promise<Turn>; ready?: Turn } | undefined
  #closed = false
  #begun = false

  constructor(root: Root, input: SessionTurnInput, log: (line: string) => void) {
    this.#root = root
    this.#input = input
    this.#log = log
  }

  /**
   * Runs one call in the live generation's turn. `approval` answers for this call only; a call
   * without one cannot be asked about, so if it needs approval it fails closed (`unavailable`).
   */
  run(call: ToolCall, signal: AbortSignal, approval?: ApprovalPort, onProgress?: (event: ProgressEvent) => void, question?: QuestionPort): Promise<ToolCallOutcome> {
    this.retireStale()
    // The common case: this generation's turn has begun and the call cannot ask anyone.
    const ready = this.#current?.ready
    if (ready !== undefined && approval === undefined && question === undefined) return ready.tools.execute(call, { signal, onProgress })
    return this.#run(call, signal, approval, onProgress, question)
  }

  async #run(
    call: ToolCall,
    signal: AbortSignal,
    approval: ApprovalPort | undefined,
    onProgress: ((event: ProgressEvent) => void) | undefined,
    question: QuestionPort | undefined,
  ): Promise<ToolCallOutcome> {
    const turn = await this.#turn()
    // No await between here and execute: a retiring turn's idle() must see this call running.
    if (approval) this.#ports.set(call.callId, approval)
    if (question) this.#questions.set(call.callId, question)
    try {
      return await turn.tools.execute(call, { signal, onProgress })
    } finally {
      this.#ports.delete(call.callId)
      this.#questions.delete(call.callId)
    }
  }

  /**
   * Continues the parked call `callId` (its `resumeToken`) in the live generation's turn, with
   * `approval` answering should the call be asked again (its tool changed while it was parked),
   * and `question` taking its body's questions.
   */
  async resume(
    callId: string,
    token: string,
    signal: AbortSignal,
    approval?: ApprovalPort,
    onProgress?: (event: ProgressEvent) => void,
    question?: QuestionPort,
  ): Promise<ToolCallOutcome> {
    const turn = await this.#turn()
    if (approval) this.#ports.set(callId, approval)
    if (question) this.#questions.set(callId, question)
    try {
      return await turn.tools.resume(token, { signal, onProgress })
    } finally {
      this.#ports.delete(callId)
      this.#questions.delete(callId)
    }
  }

  /** The seam session this MCP session's calls run in. */
  get session(): string {
    return this.#input.session
  }

  /** Whether any call ran (or resumed) here: a session that never ran one has no grants to end. */
  get begun(): boolean {
    return this.#begun
  }

  /** Ends the turn when a newer generation is live (called on every publish). */
  retireStale(): void {
    if (this.#current && this.#current.generation !== this.#root.generation) this.#retire()
  }

  /** Ends the current turn once its calls have settled. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    this.#retire()
    while (this.#ending.size > 0) await Promise.allSettled([...this.#ending])
  }

  #turn(): Promise<Turn> {
    this.retireStale()
    if (this.#current) return this.#current.turn
    if (this.#closed) return Promise.reject(new Error('the MCP session is closed'))
    const generation = this.#root.generation
    this.#begun = true
    const port: ApprovalPort = { request: (request) => this.#ask(request) }
    const question: QuestionPort = {
      elicit: (request) => this.#elicit(request),
      sample: (request) => this.#sample(request),
      roots: (request) => this.#roots(request),
    }
    // Always attended: which calls can be asked is decided per call (the port forwards to theirs),
    // so a session's first call, or one of several clients sharing a stateless session, decides nothing.
    const input = { ...this.#input, ports: { approval: port, question } }
    // Begun outside the request's trace: the session's turn outlives the request that began it.
    const turn = context.with(ROOT_CONTEXT, () => this.#root.beginTurn(input))
    const current: { generation: number; turn: Promise<Turn>; ready?: Turn } = { generation, turn }
    this.#current = current
    turn.then(
      (begun) => {
        current.ready = begun
      },
      () => {
        if (this.#current === current) this.#current = undefined
      },
    )
    return turn
  }

  #ask(request: ApprovalRequest) {
    const port = this.#ports.get(request.callId)
    if (!port) return Promise.reject(new Error('this call cannot ask for approval'))
    return port.request(request)
  }

  /** A call whose client cannot be asked (no form elicitation) is declined at once. */
  #elicit(request: QuestionRequest): Promise<QuestionAnswer> {
    const port = this.#questions.get(request.callId)
    if (port?.elicit === undefined) return Promise.resolve({ action: 'decline' })
    return port.elicit(request)
  }

  /** A call whose client cannot sample (or list its roots) is refused at once: `ctx.sample` rejects `CLIENT_UNSUPPORTED`. */
  #sample(request: SampleRequest): Promise<SampleResult> {
    const port = this.#questions.get(request.callId)
    if (port?.sample === undefined) return Promise.reject(notDeclared('sampling/createMessage', 'sampling'))
    return port.sample(request)
  }

  #roots(request: RootsRequest): Promise<readonly ClientRoot[]> {
    const port = this.#questions.get(request.callId)
    if (port?.roots === undefined) return Promise.reject(notDeclared('roots/list', 'roots'))
    return port.roots(request)
  }

  #retire(): void {
    const current = this.#current
    if (!current) return
    this.#current = undefined
    const ending = current.turn
      .then(async (turn) => {
        await turn.tools.idle()
        await turn.end()
      })
      .catch((error: unknown) => this.#log(`an MCP session turn did not end cleanly: ${messageOf(error)}`))
    this.#ending.add(ending)
    void ending.finally(() => this.#ending.delete(ending))
  }
}

function notDeclared(method: string, capability: string): SeamError {
  return new SeamError('CLIENT_UNSUPPORTED', `the MCP client did not declare the ${capability} capability, so it cannot be sent ${method}`)
}

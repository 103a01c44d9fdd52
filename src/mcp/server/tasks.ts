import { randomUUID } from 'node:crypto'
import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
  type StandardSchemaV1,
} from '@modelcontextprotocol/server'
import { messageOf, SeamError } from '../../errors.js'
import { redactText } from '../../runtime/base/redact.js'
import type { Root } from '../../runtime/root.js'
import type { ApprovalAnswer, ApprovalPort, ApprovalReply, ApprovalRequest } from '../../seams/approval.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import { isSettledTask, type StoredTask, type TaskExpect, type TaskState, type TaskStatus } from '../../seams/coordination.js'
import { answerOf, approvalForm } from './serve-approval.js'
import type { ClientAsks } from './serve-question.js'
import { TaskQuestions } from './task-questions.js'
import type { QuestionPort } from '../../seams/types.js'
import { toCallToolResult } from './serve-mapping.js'

/** The 2026-07-28 tasks extension (SEP-2663), as clients and servers name it under `capabilities.extensions`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'
/** How long a task may be asked about after it was created. */
const TTL_MS = 60 * 60_000
/** What a client is told to poll at, and how often the host running a task looks for its cancel. */
const POLL_INTERVAL_MS = 500
/** How many times a task's read-modify-write reads again after another host changed it first (see `#change`). */
const CHANGE_ATTEMPTS = 16
/** The key a task's approval question is asked under in `inputRequests` (as in `input_required` rounds). */
const APPROVAL_KEY = 'approval'

/**
 * Outcomes the runtime could not carry to a tool's result: the task `failed` (a JSON-RPC error),
 * where a tool that ran and reported an error is `completed` with `isError`.
 */
const PROTOCOL_FAULTS = new Set(['UNKNOWN_TOOL', 'GENERATION_RETIRED', 'INVALID_OUTPUT', 'JOURNAL_UNAVAILABLE', 'OUTCOME_UNKNOWN', 'PROVIDER_UNAVAILABLE'])

/**
 * How a task runs its call: `approval` parks a question (deferred), `question` takes the body's
 * questions and client requests (shown on `tasks/get`, answered by `tasks/update`), `signal` aborts the call.
 */
export type TaskRun = (signal: AbortSignal, approval: ApprovalPort, question: QuestionPort) => Promise<ToolCallOutcome>

/** Who a task's parked call resumes as: the session it parked in (a new turn of it). */
export type TaskResume = (session: string, callId: string, token: string, signal: AbortSignal, approval: ApprovalPort, question: QuestionPort) => Promise<ToolCallOutcome>

/** What a task waiting for its approval keeps in the journal besides the question it shows. */
interface ParkedState {
  readonly token: string
  readonly callId: string
  readonly answers?: readonly ApprovalAnswer[]
}

/** Whether the client declared the tasks extension: at `initialize`, in the request's envelope, or in its `_meta`. */
export function declaresTasks(server: Server, ctx: ServerContext, meta?: Record<string, unknown>): boolean {
  const envelope = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined
  const perRequest = meta?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined
  return [envelope, perRequest, server.getClientCapabilities()].some((capabilities) => hasExtension(capabilities))
}

function hasExtension(capabilities: ClientCapabilities | undefined): boolean {
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions
  return typeof extensions === 'object' && extensions !== null && extensions[TASKS_EXTENSION] !== undefined
}

/** `-32021` naming the extension: a task-only tool or a `tasks/*` method from a client that did not declare it. */
export function tasksRequired(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } as ClientCapabilities },
    `${what} needs the ${TASKS_EXTENSION} extension, which this client did not declare`,
  )
}

/** A params schema that takes the params as they are: each handler checks its own fields. */
const ANY_PARAMS: StandardSchemaV1<Record<string, unknown>> = {
  '~standard': { version: 1, vendor: 'seam-runtime', validate: (value) => ({ value: (value ?? {}) as Record<string, unknown> }) },
}

/**
 * The server side of the tasks extension (SEP-2663, protocol revision 2026-07-28), kept in its own
 * module so the SDK's can replace it once it has one. A `tools/call` of a task-capable tool from a
 * client that declared the extension answers at once with a `CreateTaskResult`, after the task is
 * stored in the journal's coordination store; the call runs on in this host (not bound to the
 * request, so a dropped connection does not cancel it) and its outcome is written to the task.
 * `tasks/get`, `tasks/update` and `tasks/cancel` read and change the stored task, so any connection
 * to any host on the same journal answers for it:
 * - a call that needs approval parks in the journal as any call does; the task is `input_required`
 *   with the approval form under `inputRequests.approval`, and the `tasks/update` answering it
 *   decides the parked call and resumes it on the host that received the answer;
 * - `tasks/cancel` settles the task `cancelled` at once; the host running its call sees that within
 *   `POLL_INTERVAL_MS` and aborts it (a parked call is decided `rejected` and closed).
 */
export class McpTasks {
  readonly #root: Root
  readonly #resume: TaskResume
  readonly #log: (line: string) => void
  /** The calls this host runs for tasks, and how to abort each. */
  readonly #running = new Map<string, { controller: AbortController; done: Promise<void>; questions: TaskQuestions }>()
  #closed = false

  constructor(root: Root, resume: TaskResume, log: (line: string) => void) {
    this.#root = root
    this.#resume = resume
    this.#log = log
  }

  get #store() {
    return this.#root.journal.coordination
  }

  /** Registers `tasks/get`, `tasks/update` and `tasks/cancel` on `server`; `tasks/result` and `tasks/list` stay unknown (`-32601`). */
  register(server: Server): void {
    server.setRequestHandler('tasks/get', { params: ANY_PARAMS }, async (params, ctx) => {
      this.#gate(server, ctx, params, 'tasks/get')
      return this.#detailed(await this.#find(params.taskId))
    })
    server.setRequestHandler('tasks/update', { params: ANY_PARAMS }, async (params, ctx) => {
      this.#gate(server, ctx, params, 'tasks/update')
      // A 2026-07-28 request's `inputResponses` are lifted out of its params by the SDK.
      await this.#update(await this.#find(params.taskId), params.inputResponses ?? ctx.mcpReq.inputResponses)
      return { resultType: 'complete' }
    })
    server.setRequestHandler('tasks/cancel', { params: ANY_PARAMS }, async (params, ctx) => {
      this.#gate(server, ctx, params, 'tasks/cancel')
      await this.#cancel(await this.#find(params.taskId))
      return { resultType: 'complete' }
    })
  }

  #gate(server: Server, ctx: ServerContext, params: Record<string, unknown>, method: string): void {
    if (!declaresTasks(server, ctx, params._meta as Record<string, unknown> | undefined)) throw tasksRequired(method)
  }

  /**
   * Stores a new task for the call `run` makes, starts it, and answers with the `CreateTaskResult`
   * (only once the task is durably stored, so an immediate `tasks/get` finds it).
   */
  async start(run: TaskRun, owner: { session: string; subjectId: string; name: string; asks: ClientAsks }): Promise<CallToolResult> {
    if (this.#closed) throw new ProtocolError(ProtocolErrorCode.InternalError, 'the server is shutting down')
    const now = Date.now()
    const task: StoredTask = {
      taskId: randomUUID(),
      session: owner.session,
      subjectId: owner.subjectId,
      status: 'working',
      createdAt: now,
      updatedAt: now,
      ttlMs: TTL_MS,
      state: { tool: owner.name, host: this.#store.host, asks: { ...owner.asks } },
    }
    await this.#store.createTask(task)
    this.#spawn(task.taskId, run, owner.asks)
    // The SDK's tools/call handler type is the complete result; a CreateTaskResult goes out as it is.
    return { resultType: 'task', ...envelope(task) } as unknown as CallToolResult
  }

  /**
   * Runs a task's call in this host, not bound to any request; its outcome settles (or parks) the
   * task. The host looks at the stored task every `POLL_INTERVAL_MS`: for its cancel, and for
   * answers another host's `tasks/update` stored for the body's questions.
   */
  #spawn(taskId: string, run: TaskRun, asks: ClientAsks): void {
    const controller = new AbortController()
    const parking = parkingPort()
    const questions = new TaskQuestions(asks, async (inputRequests) => {
      await this.#change(taskId, (task) => {
        if (task.status === 'input_required' && task.state.parked !== undefined) return undefined
        const state = { tool: task.state.tool, host: this.#store.host, asks: task.state.asks }
        if (Object.keys(inputRequests).length === 0) return { status: 'working', state }
        // Answers another host stored and this one has not taken yet stay, for the questions still open.
        const stored = (task.state.responses ?? {}) as Record<string, unknown>
        const kept = Object.fromEntries(Object.entries(stored).filter(([key]) => Object.hasOwn(inputRequests, key)))
        return { status: 'input_required', state: { ...state, inputRequests, asking: true, ...(Object.keys(kept).length > 0 ? { responses: kept } : {}) } }
      })
    })
    const watch = setInterval(() => {
      this.#store.readTask(taskId).then(
        (task) => {
          if (task === undefined || isSettledTask(task.status)) controller.abort(new Error('the task was cancelled'))
          const responses = task?.state.responses
          if (typeof responses === 'object' && responses !== null) void questions.answer(responses as Record<string, unknown>)
        },
        () => {},
      )
    }, POLL_INTERVAL_MS)
    watch.unref()
    const done = (async () => {
      let outcome: ToolCallOutcome | undefined
      let fault: unknown
      try {
        outcome = await run(controller.signal, parking.port, questions.port)
      } catch (error) {
        fault = error
      } finally {
        clearInterval(watch)
      }
      await questions.settled()
      await this.#settle(taskId, outcome, fault, parking.question())
    })()
      .catch((error: unknown) => this.#log(`mcp task ${taskId.slice(0, 8)} could not be settled: ${messageOf(error)}`))
      .finally(() => this.#running.delete(taskId))
    this.#running.set(taskId, { controller, done, questions })
  }

  /** Writes a call's outcome to its task: parked (input_required), completed (a result, maybe isError) or failed (an error). */
  async #settle(taskId: string, outcome: ToolCallOutcome | undefined, fault: unknown, question: ApprovalRequest | undefined): Promise<void> {
    const at = Date.now()
    if (outcome?.status === 'suspended' && outcome.resumeToken !== undefined && question !== undefined) {
      const parked: ParkedState = { token: outcome.resumeToken, callId: question.callId, ...(question.answers ? { answers: [...question.answers] } : {}) }
      const inputRequests = { [APPROVAL_KEY]: { method: 'elicitation/create', params: approvalForm(question) } }
      const { asks } = (await this.#store.readTask(taskId))?.state ?? {}
      await this.#store.updateTask(taskId, { status: 'input_required', state: { inputRequests, parked, asks }, at })
      return
    }
    if (this.#closed && outcome?.status !== 'completed') {
      const error = { code: ProtocolErrorCode.InternalError, message: 'the host serving the task stopped before its call settled' }
      await this.#store.updateTask(taskId, { status: 'failed', state: { error }, at })
      return
    }
    if (outcome === undefined || (outcome.status === 'failed' && outcome.code !== undefined && PROTOCOL_FAULTS.has(outcome.code))) {
      const message = outcome === undefined ? `the runtime could not run the call: ${redactText(messageOf(fault))}` : redactText(outcome.content.map(textOf).join(' ') || `the call failed (${outcome.code})`)
      const error = { code: ProtocolErrorCode.InternalError, message, ...(outcome?.code ? { data: { code: outcome.code } } : {}) }
      await this.#store.updateTask(taskId, { status: 'failed', state: { error }, at })
      return
    }
    await this.#store.updateTask(taskId, { status: 'completed', state: { result: toCallToolResult(outcome) as unknown as TaskState }, at })
  }

  /** The stored task, or `-32602` for an id this journal does not hold (or whose ttl has passed). */
  async #find(taskId: unknown): Promise<StoredTask> {
    if (typeof taskId !== 'string' || taskId === '') throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'taskId must be a string')
    const task = await this.#store.readTask(taskId)
    if (task === undefined || Date.now() > task.createdAt + task.ttlMs) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task: ${taskId.slice(0, 80)}`)
    return task
  }

  /** `tasks/get`'s DetailedTask: the envelope, and the result, error or input requests its status has. */
  #detailed(task: StoredTask): Record<string, unknown> {
    const state = task.state as { result?: unknown; error?: unknown; inputRequests?: unknown }
    return {
      resultType: 'complete',
      ...envelope(task),
      ...(task.status === 'completed' ? { result: state.result } : {}),
      ...(task.status === 'failed' ? { error: state.error } : {}),
      ...(task.status === 'input_required' ? { inputRequests: state.inputRequests } : {}),
    }
  }

  /**
   * `tasks/update`: the answer to a parked task's approval decides its call (a decision made
   * elsewhere stands) and resumes it here; keys it does not ask for are ignored, and an update of a
   * task that asks nothing is acknowledged and changes nothing.
   */
  async #update(task: StoredTask, inputResponses: unknown): Promise<void> {
    if (inputResponses !== undefined && (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'inputResponses must be an object')
    }
    if (task.status === 'input_required' && task.state.asking === true && inputResponses !== undefined) {
      return this.#answer(task, inputResponses as Record<string, unknown>)
    }
    const reply = (inputResponses as Record<string, unknown> | undefined)?.[APPROVAL_KEY] as { action?: unknown; content?: unknown } | undefined
    const parked = (task.state as { parked?: ParkedState }).parked
    if (task.status !== 'input_required' || parked === undefined || reply === undefined || typeof reply !== 'object' || reply === null) return
    const answer =
      typeof reply.action === 'string' ? answerOf({ action: reply.action, content: reply.content as Record<string, unknown> | undefined }, parked.answers) : 'rejected'
    // Of two hosts taking answers for one task, one moves it back to working and resumes its call.
    const asks = (task.state.asks ?? {}) as ClientAsks
    if (!(await this.#store.updateTask(task.taskId, { status: 'working', state: { tool: task.state.tool, host: this.#store.host, asks }, at: Date.now() }, 'input_required'))) return
    await this.#decide(parked.token, answer)
    this.#spawn(task.taskId, (signal, approval, question) => this.#resume(task.session, parked.callId, parked.token, signal, approval, question), asks)
  }

  /**
   * `tasks/update` answering the body's questions: the host running the call (this one) hands the
   * answers over and stores what is still outstanding before acknowledging, so the next `tasks/get`
   * shows only that; another host's answers are stored with the task for the host running it to
   * take (within `POLL_INTERVAL_MS`).
   */
  async #answer(task: StoredTask, replies: Record<string, unknown>): Promise<void> {
    const local = this.#running.get(task.taskId)?.questions
    if (local !== undefined) return local.answer(replies)
    await this.#change(task.taskId, (current) => {
      const requests = (current.state.inputRequests ?? {}) as Record<string, unknown>
      const answered = Object.keys(replies).filter((key) => Object.hasOwn(requests, key))
      if (answered.length === 0) return undefined
      const remaining = Object.fromEntries(Object.entries(requests).filter(([key]) => !answered.includes(key)))
      const responses = { ...((current.state.responses ?? {}) as Record<string, unknown>), ...Object.fromEntries(answered.map((key) => [key, replies[key]])) }
      return { status: 'input_required', state: { ...current.state, inputRequests: remaining, responses }, expect: 'input_required' }
    })
  }

  /**
   * Changes the stored task from what it holds now: `make` gets the task as read and returns the
   * change (`undefined`: none). The write expects the `updatedAt` it read, so a change another host
   * made meanwhile is never overwritten: the task is read again and `make` runs on that (two hosts
   * storing answers to two questions at once both land). Whether it changed.
   */
  async #change(taskId: string, make: (task: StoredTask) => { status: TaskStatus; state: TaskState; expect?: TaskStatus } | undefined): Promise<boolean> {
    for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt += 1) {
      const task = await this.#store.readTask(taskId)
      if (task === undefined || isSettledTask(task.status)) return false
      const change = make(task)
      if (change === undefined) return false
      const expect: TaskExpect = change.expect === undefined ? { updatedAt: task.updatedAt } : { status: change.expect, updatedAt: task.updatedAt }
      // Above what was read, so no two changes leave the same `updatedAt`.
      const at = Math.max(Date.now(), task.updatedAt + 1)
      if (await this.#store.updateTask(taskId, { status: change.status, state: change.state, at }, expect)) return true
    }
    this.#log(`mcp task ${taskId.slice(0, 8)}: not changed, other hosts changed it ${CHANGE_ATTEMPTS} times in a row`)
    return false
  }

  /** `tasks/cancel`: settles the task `cancelled` (idempotent); a parked call is rejected and closed. */
  async #cancel(task: StoredTask): Promise<void> {
    if (isSettledTask(task.status)) return
    const parked = (task.state as { parked?: ParkedState }).parked
    if (!(await this.#store.updateTask(task.taskId, { status: 'cancelled', state: {}, at: Date.now() }))) return
    this.#running.get(task.taskId)?.controller.abort(new Error('the task was cancelled'))
    if (task.status === 'input_required' && parked !== undefined) {
      await this.#decide(parked.token, 'rejected', true)
      const controller = new AbortController()
      this.#resume(task.session, parked.callId, parked.token, controller.signal, parkingPort().port, {}).catch((error: unknown) =>
        this.#log(`mcp task ${task.taskId.slice(0, 8)}: its parked call was not closed: ${messageOf(error)}`),
      )
    }
  }

  /** `close`: a Code Mode run rejected here settles now, its program not run again (a cancelled task). */
  async #decide(token: string, answer: ApprovalAnswer, close = false): Promise<void> {
    try {
      await this.#root.approvals.decide(token, answer, { by: 'mcp client', close })
    } catch (error) {
      if (!(error instanceof SeamError && (error.code === 'APPROVAL_CONFLICT' || error.code === 'APPROVAL_EXPIRED'))) throw error
    }
  }

  /**
   * Stops taking tasks and aborts the calls this host runs for them: their tasks are settled
   * `failed` (the host serving them stopped); tasks parked in the journal stay, for another host.
   */
  async close(): Promise<void> {
    this.#closed = true
    for (const { controller } of this.#running.values()) controller.abort(new Error('the host serving the task stopped'))
    await Promise.allSettled([...this.#running.values()].map((running) => running.done))
  }
}

/** The fields every task answer carries (SEP-2663's `Task`). */
function envelope(task: StoredTask): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status satisfies TaskStatus,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
    ttlMs: task.ttlMs,
    pollIntervalMs: POLL_INTERVAL_MS,
  }
}

/** A port that parks every question (`deferred`) and remembers the last one, to show it on the task. */
function parkingPort(): { port: ApprovalPort; question(): ApprovalRequest | undefined } {
  let asked: ApprovalRequest | undefined
  return {
    port: {
      async request(request: ApprovalRequest): Promise<ApprovalReply> {
        asked = request
        return 'deferred'
      },
    },
    question: () => asked,
  }
}

function textOf(block: { type: string; text?: string }): string {
  return block.type === 'text' && typeof block.text === 'string' ? block.text : ''
}

import type { CallToolResult } from '@modelcontextprotocol/server'
import { SeamError } from '../../errors.js'
import type { ApprovalPort, ApprovalReply, ApprovalRequest } from '../../seams/approval.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import type { QuestionPort } from '../../seams/types.js'
import type { TaskRun } from './tasks.js'

/** A held call's running body, as the task that adopts it takes it over. */
export interface RunningCall {
  readonly outcome: Promise<ToolCallOutcome>
  abort(reason: unknown): void
}

/**
 * A call of a `taskStarts: 'after-input'` tool: held while its body asks (`input_required` rounds,
 * see `HeldCalls`), then a task once a request finds it not asking. The body runs once: its
 * questions and its approval go through ports that point at the held call's, then at the task's,
 * and the task's cancel aborts it.
 */
export class TaskAfterInput {
  readonly #start: (run: TaskRun) => Promise<CallToolResult>
  /** Where the body's questions go: the held call's port, then (once promised) the task's. */
  #port: QuestionPort | Promise<QuestionPort> | undefined
  #approval: ApprovalPort | undefined
  /** The approval asked before the call was a task: parked (`deferred`), and shown by the task. */
  #asked: ApprovalRequest | undefined

  /** `start` stores the task for a run (`McpTasks.start`) and answers with its `CreateTaskResult`. */
  constructor(start: (run: TaskRun) => Promise<CallToolResult>) {
    this.#start = start
  }

  /** The run a held call starts: `body` under the held call's signal, through the switching ports. */
  held(body: TaskRun): (signal: AbortSignal, question: QuestionPort) => Promise<ToolCallOutcome> {
    return (signal, question) => {
      this.#port = question
      return body(signal, this.#approvalPort(), this.#questionPort())
    }
  }

  /**
   * Makes the running call a task: from now on its questions wait for the task's port (they are
   * the task's input requests); the answer is the `CreateTaskResult`, sent once the task is stored.
   */
  async become(running: RunningCall): Promise<CallToolResult> {
    let handOver: (port: QuestionPort) => void = () => {}
    this.#port = new Promise<QuestionPort>((resolve) => (handOver = resolve))
    try {
      return await this.#start((signal, approval, question) => {
        const abort = () => running.abort(signal.reason)
        if (signal.aborted) abort()
        else signal.addEventListener('abort', abort, { once: true })
        this.#approval = approval
        if (this.#asked !== undefined) void approval.request(this.#asked)
        handOver(question)
        return running.outcome
      })
    } catch (error) {
      // No task holds the call: it ends here, and a question it asks meanwhile is refused.
      running.abort(error)
      handOver(refusing)
      throw error
    }
  }

  #approvalPort(): ApprovalPort {
    return {
      request: (request: ApprovalRequest): Promise<ApprovalReply> => {
        if (this.#approval !== undefined) return this.#approval.request(request)
        this.#asked = request
        return Promise.resolve('deferred')
      },
    }
  }

  #questionPort(): QuestionPort {
    const port = async () => (await this.#port) ?? refusing
    return {
      elicit: async (request) => (await port()).elicit?.(request) ?? refused(),
      sample: async (request) => (await port()).sample?.(request) ?? refused(),
      roots: async (request) => (await port()).roots?.(request) ?? refused(),
    }
  }
}

const refused = () => Promise.reject(new SeamError('CLIENT_UNSUPPORTED', 'the call could not become a task, so its client cannot be asked'))
const refusing: QuestionPort = { elicit: refused, sample: refused, roots: refused }

import { SeamError } from '../../errors.js'
import type { ClientRoot, QuestionAnswer, QuestionRequest, RootsRequest, SampleRequest, SampleResult } from '../../seams/questions.js'
import type { QuestionPort } from '../../seams/types.js'
import { type ClientAsks, questionForm, samplingParams } from './serve-question.js'

/** One input request of a task as `tasks/get` shows it. */
export interface TaskInputRequest {
  readonly method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list'
  readonly params: Record<string, unknown>
}

/** As `HeldCalls` collects a round: requests asked together are shown together. */
const QUIET_MS = 15

type Pending = TaskInputRequest & { readonly resolve: (reply: unknown) => void }

/**
 * The questions and client requests (`ctx.ask`, `ctx.sample`, `ctx.roots`) of a task's running
 * call: each is an input request the task shows on `tasks/get` (`input_required`, keyed by the
 * body's `key` or its question id) until `tasks/update` answers it. `publish` writes the requests
 * still outstanding to the stored task (none: it is `working` again); answers are taken one by one,
 * so a client may answer some now and the rest later.
 */
export class TaskQuestions {
  readonly #pending = new Map<string, Pending>()
  readonly #publish: (requests: Readonly<Record<string, TaskInputRequest>>) => Promise<void>
  readonly #asks: ClientAsks
  #quiet: NodeJS.Timeout | undefined
  #writing: Promise<void> = Promise.resolve()

  constructor(asks: ClientAsks, publish: (requests: Readonly<Record<string, TaskInputRequest>>) => Promise<void>) {
    this.#asks = asks
    this.#publish = publish
  }

  /** Whether the call waits for an answer to `key`. */
  has(key: string): boolean {
    return this.#pending.has(key)
  }

  /** Hands the call the replies it waits for (other keys are ignored), then stores what is still outstanding. */
  answer(replies: Readonly<Record<string, unknown>>): Promise<void> {
    let answered = false
    for (const [key, pending] of [...this.#pending]) {
      if (!Object.hasOwn(replies, key)) continue
      this.#pending.delete(key)
      pending.resolve(replies[key])
      answered = true
    }
    return answered ? this.#write() : this.#writing
  }

  /** The port the call's requests go through. */
  get port(): QuestionPort {
    return {
      elicit: (request: QuestionRequest): Promise<QuestionAnswer> => {
        if (!this.#asks.elicit) return Promise.resolve({ action: 'decline' })
        return this.#ask({ method: 'elicitation/create', params: { ...questionForm(request) } }, request, (reply) => reply as QuestionAnswer)
      },
      sample: (request: SampleRequest): Promise<SampleResult> => {
        if (!this.#asks.sample) return Promise.reject(new SeamError('CLIENT_UNSUPPORTED', 'the MCP client did not declare the sampling capability'))
        return this.#ask({ method: 'sampling/createMessage', params: samplingParams(request) }, request, (reply) => reply as SampleResult)
      },
      roots: (request: RootsRequest): Promise<readonly ClientRoot[]> => {
        if (!this.#asks.roots) return Promise.reject(new SeamError('CLIENT_UNSUPPORTED', 'the MCP client did not declare the roots capability'))
        return this.#ask({ method: 'roots/list', params: {} }, request, (reply) => {
          const roots = (reply as { roots?: unknown } | null)?.roots
          if (!Array.isArray(roots)) throw new Error('the client answered roots/list without a list of roots')
          return roots as ClientRoot[]
        })
      },
    }
  }

  /** Waits for the last write of the outstanding requests (a settling task must not be overwritten by it). */
  settled(): Promise<void> {
    if (this.#quiet !== undefined) clearTimeout(this.#quiet)
    this.#quiet = undefined
    return this.#writing
  }

  #ask<T>(request: TaskInputRequest, asked: { questionId: string; key?: string; signal: AbortSignal }, map: (reply: unknown) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let key = asked.key ?? asked.questionId
      for (let n = 2; this.#pending.has(key); n += 1) key = `${asked.key ?? asked.questionId}-${n}`
      const gone = () => {
        if (this.#pending.delete(key)) void this.#write()
        reject(asked.signal.reason)
      }
      asked.signal.addEventListener('abort', gone, { once: true })
      this.#pending.set(key, {
        ...request,
        resolve: (reply) => {
          asked.signal.removeEventListener('abort', gone)
          try {
            resolve(map(reply))
          } catch (error) {
            reject(error)
          }
        },
      })
      if (this.#quiet !== undefined) clearTimeout(this.#quiet)
      this.#quiet = setTimeout(() => {
        this.#quiet = undefined
        void this.#write()
      }, QUIET_MS)
    })
  }

  /** Writes are chained: the last one stored is the latest view. */
  #write(): Promise<void> {
    const requests = Object.fromEntries([...this.#pending].map(([key, { method, params }]) => [key, { method, params }]))
    this.#writing = this.#writing.then(() => this.#publish(requests)).catch(() => {})
    return this.#writing
  }
}

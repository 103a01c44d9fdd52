import { createInterface, type Interface } from 'node:readline'
import type { ApprovalAnswer, ApprovalPort } from '../seams/approval.js'
import { printable } from './format.js'
import type { InStream, OutStream, Style } from './io.js'

/**
 * One reader of the chat's input for the whole session: the user's messages and the answers to
 * approval questions come from the same stream, so one `readline` holds it (a second one would
 * swallow lines buffered for the first).
 */
export class LineReader {
  readonly #rl: Interface
  readonly #lines: string[] = []
  #waiting: ((line: string | undefined) => void) | undefined
  #closed = false

  constructor(input: InStream, output: OutStream) {
    this.#rl = createInterface({ input, output, terminal: input.isTTY === true && output.isTTY === true })
    this.#rl.on('line', (line) => {
      if (this.#waiting) this.#settle(line)
      else this.#lines.push(line)
    })
    this.#rl.on('close', () => {
      this.#closed = true
      this.#settle(undefined)
    })
    // A terminal readline swallows Ctrl-C; pass it on, so the command stops the turn.
    this.#rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'))
  }

  /** Shows `prompt` and resolves to the next line, or `undefined` at end of input or on abort. */
  next(prompt: string, signal?: AbortSignal): Promise<string | undefined> {
    if (this.#lines.length > 0) return Promise.resolve(this.#lines.shift())
    if (this.#closed || signal?.aborted) return Promise.resolve(undefined)
    this.#rl.setPrompt(prompt)
    this.#rl.prompt()
    return new Promise((resolve) => {
      const onAbort = () => this.#settle(undefined)
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiting = (line) => {
        signal?.removeEventListener('abort', onAbort)
        resolve(line)
      }
    })
  }

  close(): void {
    this.#rl.close()
  }

  #settle(line: string | undefined): void {
    const waiting = this.#waiting
    this.#waiting = undefined
    waiting?.(line)
  }
}

const ANSWERS: Readonly<Record<string, ApprovalAnswer>> = { y: 'allowed-once', yes: 'allowed-once', s: 'allowed-session', session: 'allowed-session', n: 'rejected', no: 'rejected' }

/**
 * The chat's approval port: the same question as `seam call` asks (`[y]es once / [s]ession /
 * [n]o`), read from the chat's input. End of input, an empty answer, three unclear answers or an
 * abort reject (fail closed); questions are asked one at a time.
 */
export function chatApproval(reader: LineReader, output: OutStream, style: Style): ApprovalPort {
  let queue: Promise<unknown> = Promise.resolve()
  const ask: ApprovalPort['request'] = async (request) => {
    if (request.reason) output.write(`${style.yellow('approval needed:')} ${printable(request.reason)}\n`)
    const question = `Allow ${style.bold(printable(request.summary))}? ${style.dim('[y]es once / [s]ession / [n]o')} `
    for (let attempt = 0; attempt < 3; attempt++) {
      const text = (await reader.next(question, request.signal))?.trim().toLowerCase()
      if (text === undefined || text === '') return 'rejected'
      const answer = ANSWERS[text]
      if (answer) return answer
      output.write('answer y, s or n\n')
    }
    return 'rejected'
  }
  return {
    available: true,
    request(request) {
      const answer = queue.then(() => ask(request))
      queue = answer.catch(() => {})
      return answer
    },
  }
}

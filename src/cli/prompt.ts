import { createInterface } from 'node:readline'
import { ALL_ANSWERS, type ApprovalAnswer, type ApprovalPort, type ApprovalRequest } from '../seams/approval.js'
import { printable } from './format.js'
import type { InStream, OutStream, Style } from './io.js'

/** What the prompt offers and what each typed word means, from the answers the request offers. */
interface Offer {
  readonly choices: string
  readonly words: Readonly<Record<string, ApprovalAnswer>>
  readonly retry: string
}

function offerFor(answers: readonly ApprovalAnswer[]): Offer {
  const once = answers.includes('allowed-once')
  const session = answers.includes('allowed-session')
  const words: Record<string, ApprovalAnswer> = { n: 'rejected', no: 'rejected' }
  if (once && session) {
    Object.assign(words, { y: 'allowed-once', yes: 'allowed-once', s: 'allowed-session', session: 'allowed-session' })
    return { choices: '[y]es once / [s]ession / [n]o', words, retry: 'answer y, s or n' }
  }
  // One allow: `y` is it, worded as what it grants (a `once` tool's yes holds for the session).
  const allow = session ? 'allowed-session' : 'allowed-once'
  Object.assign(words, { y: allow, yes: allow })
  return { choices: session ? '[y]es for this session / [n]o' : '[y]es / [n]o', words, retry: 'answer y or n' }
}

/** Unrecognised answers before the prompt gives up and rejects. */
const MAX_TRIES = 3

export interface TerminalApprovalOptions {
  readonly input: InStream
  readonly output: OutStream
  readonly style: Style
}

/**
 * An approval port that asks on a terminal: `Allow write_file path="notes.md" …? [y]es once /
 * [s]ession / [n]o`, offering only the answers the request offers. An empty answer, end of input or an abort rejects (fail closed); questions
 * from concurrent calls are asked one at a time.
 */
export function terminalApproval(options: TerminalApprovalOptions): ApprovalPort {
  let queue: Promise<unknown> = Promise.resolve()
  return {
    available: true,
    request(request) {
      const answer = queue.then(() => ask(options, request))
      queue = answer.catch(() => {})
      return answer
    },
  }
}

async function ask({ input, output, style }: TerminalApprovalOptions, request: ApprovalRequest): Promise<ApprovalAnswer> {
  if (request.signal.aborted) return 'rejected'
  // The summary and the reason quote the model's arguments: shown with control characters escaped,
  // so they cannot redraw the question the person is answering.
  if (request.reason) output.write(`${style.yellow('approval needed:')} ${printable(request.reason)}\n`)
  const offer = offerFor(request.answers ?? ALL_ANSWERS)
  const question = `Allow ${style.bold(printable(request.summary))}? ${style.dim(offer.choices)} `
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const text = await readLine(input, output, question, request.signal)
    if (text === undefined) {
      output.write('\n')
      return 'rejected'
    }
    const answer = Object.hasOwn(offer.words, text.trim().toLowerCase()) ? offer.words[text.trim().toLowerCase()] : undefined
    if (answer) return answer
    if (text.trim() === '') return 'rejected'
    output.write(`${offer.retry}\n`)
  }
  return 'rejected'
}

/** `readLine` on these streams, for a tool's questions (`terminalQuestions`). */
export function lineReader(input: InStream, output: OutStream): (prompt: string, signal: AbortSignal) => Promise<string | undefined> {
  return (prompt, signal) => readLine(input, output, prompt, signal)
}

/** One line from `input`, or `undefined` at end of input or on abort. */
function readLine(input: InStream, output: OutStream, question: string, signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = createInterface({ input, output, terminal: output.isTTY === true && input.isTTY === true })
    let settled = false
    const finish = (value: string | undefined) => {
      if (settled) return
      settled = true
      signal.removeEventListener('abort', onAbort)
      rl.close()
      resolve(value)
    }
    const onAbort = () => finish(undefined)
    signal.addEventListener('abort', onAbort, { once: true })
    rl.once('close', () => finish(undefined))
    // A terminal readline swallows Ctrl-C; pass it on, so the command aborts the call (and this question).
    rl.once('SIGINT', () => process.kill(process.pid, 'SIGINT'))
    rl.question(question, (answer) => finish(answer))
  })
}

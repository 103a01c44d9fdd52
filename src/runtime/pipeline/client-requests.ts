/**
 * A request a running call sends its client besides a question: `ctx.sample` (MCP's
 * `sampling/createMessage`) and `ctx.roots` (`roots/list`). Journaled as questions are: a
 * `question/asked` naming the `method` (with a short summary, never the whole conversation), then
 * exactly one `question/answered`, `accept` with the result (redacted as arguments are) or `cancel`
 * with why. Unlike a question there is no answer to fall back on, so a request nobody can answer
 * rejects the body's promise:
 * - a malformed request, `INVALID_CLIENT_REQUEST` (nothing journaled);
 * - an unattended turn, or a port without `sample` / `roots`, `CLIENT_UNSUPPORTED` (`no-port`);
 * - the client refusing or failing, past `timeoutMs` (the request's, else the root's
 *   `approvalTimeoutMs`), or the call aborted, `CLIENT_REQUEST_FAILED`.
 */
import { messageOf, SeamError } from '../../errors.js'
import type { ClientMethod, QuestionReason } from '../../seams/journal.js'
import type { ClientRoot, SampleRequest, SampleResult, ToolRootsQuery, ToolSample } from '../../seams/questions.js'
import { isRequestKey } from '../../features/question-schema.js'
import { ABORTED, TIMED_OUT, untilDue } from '../base/abort.js'
import type { CallState } from './state.js'

const SUMMARY_CHARS = 200

/** Sends the call's `index`th request (1-based, counted with its questions) as `sampling/createMessage`. */
export async function sampleClient(state: CallState, signal: AbortSignal, input: unknown, index: number): Promise<SampleResult> {
  const sample = checkSample(input)
  const { timeoutMs: _timeout, key: _key, ...params } = sample
  const summary = firstText(sample) ?? 'sampling/createMessage'
  const rest = JSON.stringify({ maxTokens: sample.maxTokens, ...(sample.systemPrompt === undefined ? {} : { systemPrompt: true }) })
  return request(state, signal, index, 'sampling/createMessage', sample, summary, rest, async (port, base) => {
    if (port.sample === undefined) return undefined
    const result = await port.sample(Object.freeze({ ...base, params }) as SampleRequest)
    return checkResult(result)
  })
}

/** Sends the call's `index`th request as `roots/list`. */
export async function listRoots(state: CallState, signal: AbortSignal, input: unknown, index: number): Promise<readonly ClientRoot[]> {
  const query = checkQuery(input)
  return request(state, signal, index, 'roots/list', query, 'roots/list', '{}', async (port, base) => {
    if (port.roots === undefined) return undefined
    const roots = await port.roots(Object.freeze(base))
    if (!Array.isArray(roots) || !roots.every((root) => typeof root?.uri === 'string')) throw new Error('the client answered roots/list with something other than a list of roots')
    return Object.freeze(roots.map((root) => Object.freeze({ uri: root.uri, ...(typeof root.name === 'string' ? { name: root.name } : {}) })))
  })
}

type Base = { questionId: string; callId: string; name: string; turnId: string; key?: string; signal: AbortSignal }
type Port = NonNullable<CallState['ctx']['turn']['ports']['question']>

async function request<T>(
  state: CallState,
  signal: AbortSignal,
  index: number,
  method: ClientMethod,
  input: { timeoutMs?: number; key?: string },
  summary: string,
  schema: string,
  send: (port: Port, base: Base) => Promise<T | undefined>,
): Promise<T> {
  const { ctx, call } = state
  const { turn } = ctx
  const questionId = `q${index}`
  const ids = { turnId: turn.turnId, callId: call.callId, questionId }
  await ctx.append({ ...ids, kind: 'question/asked', seq: ctx.nextSeq(), at: Date.now(), name: call.name, message: summary, schema, method })
  const answered = (reason: QuestionReason | undefined, content?: unknown) =>
    ctx.append({
      ...ids,
      kind: 'question/answered',
      seq: ctx.nextSeq(),
      at: Date.now(),
      action: content === undefined ? 'cancel' : 'accept',
      ...(content === undefined ? {} : { content: JSON.stringify(content) }),
      ...(reason === undefined ? {} : { reason }),
    })
  const port = turn.unattended ? undefined : turn.ports.question
  const fail = async (reason: QuestionReason, error: SeamError): Promise<never> => {
    await answered(reason)
    throw error
  }
  if (port === undefined || (method === 'roots/list' ? port.roots : port.sample) === undefined) {
    return fail('no-port', unsupported(method, turn.unattended ? 'the turn is unattended' : 'the turn has no client that answers it'))
  }
  if (signal.aborted) return fail('aborted', failed(method, 'the call was aborted'))
  const asking = new AbortController()
  const base: Base = { ...ids, name: call.name, turnId: turn.turnId, ...(input.key === undefined ? {} : { key: input.key }), signal: asking.signal }
  const timeoutMs = input.timeoutMs ?? turn.policy.approvalTimeoutMs ?? ctx.limits.approvalTimeoutMs
  let given: T | undefined | typeof ABORTED | typeof TIMED_OUT
  try {
    given = await untilDue(send(port, base), signal, timeoutMs)
  } catch (error) {
    asking.abort()
    if (error instanceof SeamError && error.code === 'CLIENT_UNSUPPORTED') return fail('no-port', error)
    return fail(signal.aborted ? 'aborted' : 'failed', failed(method, signal.aborted ? 'the call was aborted' : messageOf(error)))
  }
  if (given === TIMED_OUT || given === ABORTED) {
    asking.abort()
    return fail(given === TIMED_OUT ? 'timeout' : 'aborted', failed(method, given === TIMED_OUT ? `the client did not answer within ${timeoutMs} ms` : 'the call was aborted'))
  }
  if (given === undefined) return fail('no-port', unsupported(method, 'the turn has no client that answers it'))
  await answered(undefined, method === 'roots/list' ? { roots: given } : given)
  return given
}

function unsupported(method: ClientMethod, why: string): SeamError {
  return new SeamError('CLIENT_UNSUPPORTED', `${method === 'roots/list' ? 'ctx.roots' : 'ctx.sample'}: ${why} (${method})`, {
    hint: 'serve the tool over MCP to a client that declares the capability, or give the turn a question port with this method',
  })
}

function failed(method: ClientMethod, why: string): SeamError {
  return new SeamError('CLIENT_REQUEST_FAILED', `${method === 'roots/list' ? 'ctx.roots' : 'ctx.sample'}: ${why}`)
}

function invalid(what: string, why: string): SeamError {
  return new SeamError('INVALID_CLIENT_REQUEST', `${what} ${why}`)
}

function checkCommon(what: string, value: Record<string, unknown>): void {
  const { timeoutMs, key } = value
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 0x7fff_ffff)) {
    throw invalid(what, '`timeoutMs` must be a positive number of milliseconds')
  }
  if (key !== undefined && !isRequestKey(key)) throw invalid(what, '`key` must be 1 to 64 letters, digits, `_`, `-` or `.`')
}

function checkSample(input: unknown): ToolSample {
  if (input === null || typeof input !== 'object') throw invalid('ctx.sample', 'takes an object { messages, maxTokens }')
  const value = input as Record<string, unknown>
  const { messages, maxTokens, systemPrompt } = value
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('ctx.sample', 'needs `messages`, a non-empty array')
  for (const message of messages as unknown[]) {
    const { role, content } = (message ?? {}) as Record<string, unknown>
    if (role !== 'user' && role !== 'assistant') throw invalid('ctx.sample', "has a message whose `role` is not 'user' or 'assistant'")
    const blocks = Array.isArray(content) ? content : [content]
    if (blocks.length === 0 || !blocks.every((block) => typeof (block as { type?: unknown } | null)?.type === 'string')) {
      throw invalid('ctx.sample', 'has a message whose `content` is not a block (or blocks) with a `type`')
    }
  }
  if (!(typeof maxTokens === 'number' && Number.isInteger(maxTokens) && maxTokens > 0)) throw invalid('ctx.sample', '`maxTokens` must be a positive integer')
  if (systemPrompt !== undefined && typeof systemPrompt !== 'string') throw invalid('ctx.sample', '`systemPrompt` must be a string')
  checkCommon('ctx.sample', value)
  return input as ToolSample
}

function checkQuery(input: unknown): ToolRootsQuery {
  if (input === undefined) return {}
  if (input === null || typeof input !== 'object') throw invalid('ctx.roots', 'takes no argument, or { timeoutMs?, key? }')
  checkCommon('ctx.roots', input as Record<string, unknown>)
  return input as ToolRootsQuery
}

/** A client's result is untrusted: it must at least look like one (a role, content, a model). */
function checkResult(result: unknown): SampleResult {
  const { role, content, model } = (result ?? {}) as Record<string, unknown>
  if ((role !== 'assistant' && role !== 'user') || content === null || typeof content !== 'object' || typeof model !== 'string') {
    throw new Error('the client answered sampling/createMessage with something other than a message (role, content, model)')
  }
  return Object.freeze(result as SampleResult)
}

function firstText(sample: ToolSample): string | undefined {
  for (const message of sample.messages) {
    for (const block of Array.isArray(message.content) ? message.content : [message.content]) {
      if (block.type === 'text' && typeof block.text === 'string') return block.text.length > SUMMARY_CHARS ? `${block.text.slice(0, SUMMARY_CHARS - 1)}…` : block.text
    }
  }
  return undefined
}

import { type CallToolResult, type ElicitRequestParams, type ElicitResult, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client'

/** The 2026-07-28 tasks extension (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'
const VERSION = '2026-07-28'
/** A server's `pollIntervalMs` is kept within these. */
const MIN_POLL_MS = 50
const MAX_POLL_MS = 5_000
const DEFAULT_POLL_MS = 500
/** One poll that takes longer than this counts as dropped: the next one asks again. */
const POLL_REQUEST_MS = 10_000
/** `tasks/cancel` is sent once, best effort, within this. */
const CANCEL_MS = 5_000

/** Where a task is followed: the mount's endpoint, what it sends with every request, what the client declares. */
export interface TaskTarget {
  readonly url: string | URL
  /** The mount's static headers (secrets: never in errors). */
  readonly headers?: Readonly<Record<string, string>>
  /** The mount's `Authorization` value when it signs in, read for each request (a token may be refreshed). */
  readonly authorization?: () => Promise<string | undefined>
  /** The client's capabilities, the tasks extension among them. */
  readonly capabilities: Readonly<Record<string, unknown>>
}

/** How one call follows its task. */
export interface TaskFollowing {
  /** The caller's cancel: it sends `tasks/cancel`. */
  readonly signal?: AbortSignal
  /** The mount's disposal: no one is left to read the result, so it sends `tasks/cancel` too. */
  readonly stop?: AbortSignal
  /** When the call runs out of time (epoch ms): it sends `tasks/cancel` and fails as the SDK's request timeout. */
  readonly deadline: number
  /** The question of an `input_required` task, asked as the call's own (`McpToolService` forwards it to the turn). */
  ask(params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult>
}

/**
 * Follows a task a server made of a `tools/call` (its `CreateTaskResult`) to the call's result:
 * - `tasks/get` every `pollIntervalMs` (the server's latest, kept within 50 ms – 5 s), each poll a
 *   request of its own over `fetch`: a dropped connection, a refused one (a listener restarting) or
 *   a 5xx is asked again at the next poll, so the call survives them within its deadline;
 * - `completed` is the tool's result; `failed` is its JSON-RPC error; `cancelled` is `-32800`;
 * - `input_required`: each `elicitation/create` it asks goes to `following.ask` and the answers go
 *   back in one `tasks/update` (sent again if it was dropped, never asked twice); a task that asks
 *   anything else (sampling, roots) is cancelled, which this client cannot answer;
 * - an abort of `following.signal`, or the deadline, sends `tasks/cancel`.
 * The SDK's client has no runtime for the extension (it refuses `tasks/*` on a 2026-07-28 session),
 * so these few requests are made here.
 */
export async function followTask(target: TaskTarget, created: Record<string, unknown>, following: TaskFollowing): Promise<CallToolResult> {
  const taskId = String(created.taskId)
  const deadline = AbortSignal.timeout(Math.max(0, following.deadline - Date.now()))
  const signal = AbortSignal.any([deadline, ...(following.signal ? [following.signal] : []), ...(following.stop ? [following.stop] : [])])
  let task = created
  let answers: { at: unknown; responses: Record<string, ElicitResult>; sent: boolean } | undefined
  try {
    for (;;) {
      // A CreateTaskResult carries no result: what a task settled with is read from tasks/get.
      if (task.status === 'completed' && task !== created) return task.result as CallToolResult
      if (task.status === 'failed' && task !== created) {
        const failure = (task.error ?? {}) as { code?: number; message?: string; data?: unknown }
        throw new ProtocolError(failure.code ?? -32603, failure.message ?? 'the task failed', failure.data)
      }
      if (task.status === 'cancelled') throw new ProtocolError(-32800, 'the server cancelled the task')
      if (task.status === 'input_required' && task.inputRequests !== undefined) {
        // One round is asked once (a round is the state its lastUpdatedAt names); a dropped update is sent again.
        let round = answers
        if (round === undefined || round.at !== task.lastUpdatedAt) {
          round = { at: task.lastUpdatedAt, responses: await answerAll(target, taskId, task.inputRequests, following, signal), sent: false }
          answers = round
        }
        if (!round.sent) round.sent = (await attempt(() => request(target, 'tasks/update', { taskId, inputResponses: round.responses }, taskId, signal), signal)) !== undefined
      }
      await sleep(pollMs(task.pollIntervalMs), signal)
      const polled = await attempt(() => request(target, 'tasks/get', { taskId }, taskId, signal), signal)
      if (polled !== undefined) task = { ...polled, pollIntervalMs: polled.pollIntervalMs ?? task.pollIntervalMs }
    }
  } catch (error) {
    if (!signal.aborted) throw error
    await request(target, 'tasks/cancel', { taskId }, taskId, AbortSignal.timeout(CANCEL_MS)).catch(() => undefined)
    // The deadline (not the caller's abort) as the SDK reports its own request timeout.
    if (deadline.aborted && !following.signal?.aborted) throw new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out')
    throw error
  }
}

/** The answers to every request of an `input_required` round, keyed as the server keyed them. */
async function answerAll(target: TaskTarget, taskId: string, requests: unknown, following: TaskFollowing, signal: AbortSignal): Promise<Record<string, ElicitResult>> {
  const responses: Record<string, ElicitResult> = {}
  for (const [key, asked] of Object.entries((requests ?? {}) as Record<string, { method?: unknown; params?: unknown }>)) {
    if (asked?.method !== 'elicitation/create') {
      await request(target, 'tasks/cancel', { taskId }, taskId, AbortSignal.timeout(CANCEL_MS)).catch(() => undefined)
      throw new ProtocolError(-32603, `the task asks for ${JSON.stringify(String(asked?.method).slice(0, 40))}, which a mounted server cannot be answered with; it was cancelled`)
    }
    responses[key] = await following.ask(asked.params as ElicitRequestParams, signal)
    signal.throwIfAborted()
  }
  return responses
}

/** A request whose connection dropped (or whose server is restarting): `undefined`, to be asked again. */
async function attempt(send: () => Promise<Record<string, unknown>>, signal: AbortSignal): Promise<Record<string, unknown> | undefined> {
  try {
    return await send()
  } catch (error) {
    if (signal.aborted || !(error instanceof Dropped)) throw error
    return undefined
  }
}

/** A request that got no answer from the server: asked again at the next poll. */
class Dropped extends Error {}

async function request(target: TaskTarget, method: string, params: Record<string, unknown>, name: string, signal: AbortSignal): Promise<Record<string, unknown>> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'seam-runtime', version: '0.1.0' },
    'io.modelcontextprotocol/clientCapabilities': target.capabilities,
  }
  const authorization = await target.authorization?.()
  let text: string
  let status: number
  try {
    const response = await fetch(target.url, {
      method: 'POST',
      signal: AbortSignal.any([signal, AbortSignal.timeout(POLL_REQUEST_MS)]),
      headers: {
        ...target.headers,
        ...(authorization ? { authorization } : {}),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': VERSION,
        'mcp-method': method,
        'mcp-name': name,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
    })
    status = response.status
    text = await response.text()
  } catch (error) {
    if (signal.aborted) throw error
    throw new Dropped(`${method} got no answer`, { cause: error })
  }
  // An SSE answer: the last data line is the response (notifications before it are not used here).
  const json = text.trimStart().startsWith('{') ? text : (text.match(/^data: (.+)$/gm)?.at(-1)?.slice(6) ?? '')
  let body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }
  try {
    body = JSON.parse(json)
  } catch {
    // A proxy's or a restarting server's page: asked again; any other refusal (401, 404) stands.
    if (status >= 500 || status === 408 || status === 429) throw new Dropped(`${method}: HTTP ${status}`)
    throw new Error(`the server answered ${method} with HTTP ${status} and no JSON-RPC response`)
  }
  if (body.error) throw new ProtocolError(body.error.code, body.error.message, body.error.data)
  if (body.result === undefined || typeof body.result !== 'object' || body.result === null) throw new Error(`the server answered ${method} without a result`)
  return body.result
}

function pollMs(value: unknown): number {
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Number(value) || DEFAULT_POLL_MS))
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop)
      resolve()
    }, ms)
    const stop = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', stop, { once: true })
  })
}

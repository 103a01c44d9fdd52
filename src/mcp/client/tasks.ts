import { type CallToolResult, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client'

/** The 2026-07-28 tasks extension (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'
const VERSION = '2026-07-28'
/** A server's `pollIntervalMs` is kept within these. */
const MIN_POLL_MS = 50
const MAX_POLL_MS = 5_000

export interface TaskCallTarget {
  readonly url: string | URL
  /** The mount's static headers (secrets: never in errors). */
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * A `tools/call` to a 2026-07-28 HTTP server that serves the tasks extension, declaring it: a
 * server that makes the call a task answers with a `CreateTaskResult`, and the call is then polled
 * with `tasks/get` (each poll a request of its own, so a dropped stream or connection loses
 * nothing: the next poll asks again) until its result. The SDK's client refuses a `resultType:
 * 'task'` answer, so this speaks the few requests itself, over `fetch`. An abort of `signal` (the
 * call's cancel, or its deadline) sends `tasks/cancel`. A task that asks for input is cancelled:
 * this client has no way to answer it yet.
 */
export async function callAsTask(
  target: TaskCallTarget,
  params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> },
  options: { signal?: AbortSignal; timeout: number },
): Promise<CallToolResult> {
  const deadline = AbortSignal.timeout(options.timeout)
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline
  try {
    return await run(target, params, signal)
  } catch (error) {
    // The deadline (not the caller's abort) as the SDK reports its own request timeout.
    if (deadline.aborted && !options.signal?.aborted) throw new SdkError(SdkErrorCode.RequestTimeout, `Request timed out after ${options.timeout} ms`)
    throw error
  }
}

async function run(
  target: TaskCallTarget,
  params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> },
  signal: AbortSignal,
): Promise<CallToolResult> {
  const first = await request(target, 'tools/call', params, params.name, signal)
  if (first.resultType !== 'task') return first as unknown as CallToolResult
  const taskId = String(first.taskId)
  const poll = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Number(first.pollIntervalMs) || 500))
  try {
    for (;;) {
      await sleep(poll, signal)
      let task: Record<string, unknown>
      try {
        task = await request(target, 'tasks/get', { taskId }, taskId, signal)
      } catch (error) {
        // A dropped connection is asked again at the next poll; the server's own refusal is final.
        if (signal.aborted || error instanceof ProtocolError) throw error
        continue
      }
      if (task.status === 'completed') return task.result as CallToolResult
      if (task.status === 'failed') {
        const failure = (task.error ?? {}) as { code?: number; message?: string; data?: unknown }
        throw new ProtocolError(failure.code ?? -32603, failure.message ?? 'the task failed', failure.data)
      }
      if (task.status === 'cancelled') throw new ProtocolError(-32800, 'the server cancelled the task')
      if (task.status === 'input_required') {
        await request(target, 'tasks/cancel', { taskId }, taskId, AbortSignal.timeout(5_000)).catch(() => undefined)
        throw new ProtocolError(-32603, 'the task asks for input, which a mounted server cannot be answered with yet; it was cancelled')
      }
    }
  } catch (error) {
    if (signal.aborted) await request(target, 'tasks/cancel', { taskId }, taskId, AbortSignal.timeout(5_000)).catch(() => undefined)
    throw error
  }
}

async function request(target: TaskCallTarget, method: string, params: Record<string, unknown>, name: string, signal: AbortSignal): Promise<Record<string, unknown>> {
  const meta = {
    ...((params._meta as Record<string, unknown> | undefined) ?? {}),
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'seam-runtime', version: '0.1.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
  }
  const response = await fetch(target.url, {
    method: 'POST',
    signal,
    headers: {
      ...target.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      'mcp-method': method,
      'mcp-name': name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
  })
  const text = await response.text()
  // An SSE answer: the last data line is the response (notifications before it are not used here).
  const json = text.trimStart().startsWith('{') ? text : (text.match(/^data: (.+)$/gm)?.at(-1)?.slice(6) ?? '')
  let body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }
  try {
    body = JSON.parse(json)
  } catch {
    throw new Error(`the server answered ${method} with HTTP ${response.status} and no JSON-RPC response`)
  }
  if (body.error) throw new ProtocolError(body.error.code, body.error.message, body.error.data)
  if (body.result === undefined) throw new Error(`the server answered ${method} without a result`)
  return body.result
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

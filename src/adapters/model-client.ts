import { SeamError } from '../errors.js'
import type { ToolCapability } from '../seams/capabilities.js'
import type { ToolCall } from '../seams/calls.js'
import { type ModelDelta, readChatStream, StreamProblem } from './chat-stream.js'
import type { AgentMessage } from './messages.js'
import { fromChatToolCalls, toChatHistory, toChatTools } from './openai-chat.js'

/** One model request: the conversation so far and the tools the model may call. */
export interface ModelRequest {
  readonly messages: readonly AgentMessage[]
  readonly tools: readonly ToolCapability[]
  readonly signal: AbortSignal
  /** Told each piece of the answer as it arrives, when the client streams (`runAgent` makes events of them). */
  readonly onDelta?: (delta: ModelDelta) => void
}

export type { ModelDelta }

/** One model answer: its text and the tool calls it wants, in model order (none: the final answer). */
export interface ModelReply {
  readonly text: string
  readonly toolCalls: readonly ToolCall[]
}

/** The least `runAgent` needs of a model: any API, any SDK, or a script in a test. */
export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelReply>
}

export interface OpenAiChatModelOptions {
  readonly model: string
  /** Default `https://api.openai.com/v1`; any OpenAI-compatible server (Ollama, vLLM, LM Studio). */
  readonly baseUrl?: string
  readonly apiKey?: string
  /** Strict-mode tool schemas (default `false`: local servers rarely support it). */
  readonly strict?: boolean
  readonly fetch?: typeof fetch
  /** Extra request fields (`temperature`, `max_tokens` …). */
  readonly body?: Readonly<Record<string, unknown>>
  /**
   * Ask for the answer as server-sent events (default `true`), told to `onDelta` as it arrives. A
   * server that answers with one JSON body instead is read as such.
   */
  readonly stream?: boolean
}

/**
 * A `ModelClient` for any OpenAI-compatible Chat Completions endpoint, on `fetch` (no SDK),
 * streaming by default. An HTTP error, an answer that is not a chat completion, or an error event in
 * the stream throws `PROVIDER_UNAVAILABLE` with the server's message; the API key never appears in it.
 */
export function openAiChatModel(options: OpenAiChatModelOptions): ModelClient {
  const baseUrl = (options.baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '')
  const doFetch = options.fetch ?? fetch
  return {
    async complete({ messages, tools, signal, onDelta }) {
      const chatTools = toChatTools(tools, { strict: options.strict ?? false })
      const stream = options.stream ?? true
      const body = {
        ...options.body,
        model: options.model,
        messages: toChatHistory(messages),
        ...(chatTools.length > 0 ? { tools: chatTools } : {}),
        ...(stream ? { stream: true } : {}),
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`
      let response: Response
      try {
        response = await doFetch(`${baseUrl}/chat/completions`, { method: 'POST', headers, body: JSON.stringify(body), signal })
      } catch (error) {
        if (signal.aborted) throw error
        throw new SeamError('PROVIDER_UNAVAILABLE', `The model endpoint ${baseUrl} could not be reached: ${(error as Error).message}`, { cause: error })
      }
      if (response.ok && response.body && /^text\/event-stream/i.test(response.headers.get('content-type') ?? '')) {
        let streamed: Awaited<ReturnType<typeof readChatStream>>
        try {
          streamed = await readChatStream(response.body, onDelta)
        } catch (error) {
          if (signal.aborted || !(error instanceof StreamProblem || error instanceof TypeError)) throw error
          throw new SeamError('PROVIDER_UNAVAILABLE', `The model endpoint ${baseUrl} broke off its streamed answer: ${error.message}`, { cause: error })
        }
        // A call the stream never named (a gap in the indexes) is no call.
        const calls = streamed.tool_calls.filter((call) => call !== undefined && call.function.name !== '')
        return { text: streamed.content, toolCalls: fromChatToolCalls({ tool_calls: calls }, chatTools) }
      }
      const text = await response.text()
      if (!response.ok) throw new SeamError('PROVIDER_UNAVAILABLE', `The model endpoint ${baseUrl} answered ${response.status}: ${errorMessage(text)}`)
      const message = parseMessage(text)
      if (!message) throw new SeamError('PROVIDER_UNAVAILABLE', `The model endpoint ${baseUrl} did not answer with a chat completion: ${text.slice(0, 200)}`)
      return { text: typeof message.content === 'string' ? message.content : '', toolCalls: fromChatToolCalls(message, chatTools) }
    },
  }
}

function parseMessage(text: string): { content?: unknown; tool_calls?: unknown[] } | undefined {
  try {
    const body = JSON.parse(text) as { choices?: { message?: { content?: unknown; tool_calls?: unknown[] } }[] }
    return body.choices?.[0]?.message
  } catch {
    return undefined
  }
}

function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string }
    const message = typeof body.error === 'string' ? body.error : body.error?.message
    if (typeof message === 'string') return message
  } catch {
    // not JSON: show the start of the body
  }
  return text.slice(0, 200)
}

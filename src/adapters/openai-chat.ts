import type { AgentCapabilities, ToolCapability } from '../seams/capabilities.js'
import type { ToolCall } from '../seams/calls.js'
import type { JsonSchema } from '../seams/types.js'
import { type AgentMessage, argumentsText, batches, type ToolResult } from './messages.js'
import { functionDefinitions, type OpenAiToolOptions, remember, toToolCall } from './openai-tools.js'
import { blockText, contextsOf, contextText, emptyText, imageIntro } from './placement.js'

/** A Chat Completions function tool (`tools[]` of a request). */
export interface ChatTool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean }
}

export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }
  | { type: 'input_audio'; input_audio: { data: string; format: 'wav' | 'mp3' } }

/** The audio formats Chat Completions takes in a user message. */
const AUDIO_FORMATS: Readonly<Record<string, 'wav' | 'mp3'>> = { 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3' }

/** An assistant message: what a reply's `choices[0].message` is, and what goes back into the history. */
export interface ChatAssistantMessage {
  role: 'assistant'
  content: string | null
  tool_calls?: ChatToolCall[] | undefined
}

/** The Chat Completions messages these adapters read and write. */
export type ChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | ChatAssistantMessage
  | { role: 'tool'; tool_call_id: string; content: string }

/** The turn's tools as Chat Completions `tools`; keep the array to pass to `fromChatToolCalls`. */
export function toChatTools(capabilities: AgentCapabilities | readonly ToolCapability[], options: OpenAiToolOptions = {}): ChatTool[] {
  const definitions = functionDefinitions(capabilities, options)
  const tools = definitions.map((d): ChatTool => ({ type: 'function', function: { name: d.name, description: d.description, parameters: d.parameters, strict: d.strict } }))
  return remember(tools, capabilities, definitions)
}

/**
 * The function calls of an assistant message, in model order (any other message has none). Takes
 * this module's `ChatMessage` or any message with `tool_calls` (the OpenAI SDK's). Pass the `tools`
 * from `toChatTools` so strict-mode `null`s for optional properties are dropped again.
 */
export function fromChatToolCalls(message: ChatMessage | { readonly tool_calls?: readonly unknown[] | null | undefined }, tools?: readonly ChatTool[]): ToolCall[] {
  const calls: ToolCall[] = []
  for (const call of ('tool_calls' in message ? message.tool_calls : undefined) ?? []) {
    const fn = (call as Partial<ChatToolCall>).function
    if ((call as ChatToolCall).type !== 'function' || !fn) continue
    calls.push(toToolCall((call as ChatToolCall).id, fn.name, fn.arguments ?? '', tools))
  }
  return calls
}

/**
 * One batch's results as the messages that answer the assistant's calls: one `tool` message per
 * call, in model order, then, when needed, one `user` message: tool messages take text only, so
 * images (and WAV or MP3 audio) follow there, each introduced by the call it came from, and so do
 * deferred contexts.
 */
export function toChatMessages(results: readonly ToolResult[]): ChatMessage[] {
  const messages: ChatMessage[] = []
  const followUp: ChatContentPart[] = []
  for (const result of results) {
    const text: string[] = []
    const media: ChatContentPart[] = []
    for (const block of result.content) {
      const part = mediaPart(block)
      if (part) {
        media.push(part)
        text.push(`[${block.type} ${(block as { mimeType: string }).mimeType}: in the next user message]`)
      } else {
        text.push(blockText(block))
      }
    }
    messages.push({ role: 'tool', tool_call_id: result.callId, content: toolText(result, text) })
    if (media.length > 0) followUp.push({ type: 'text', text: imageIntro(result) }, ...media)
  }
  for (const context of contextsOf(results)) followUp.push({ type: 'text', text: contextText(context) })
  if (followUp.length > 0) messages.push({ role: 'user', content: followUp })
  return messages
}

/** A provider-neutral conversation (a `transcript`, or `runAgent`'s messages) as Chat Completions messages. */
export function toChatHistory(messages: readonly AgentMessage[]): ChatMessage[] {
  const out: ChatMessage[] = []
  for (const item of batches(messages, (m): m is AgentMessage & { role: 'tool' } => m.role === 'tool')) {
    if (Array.isArray(item)) {
      out.push(...toChatMessages(item.map((m) => m.result)))
      continue
    }
    const message = item as AgentMessage
    if (message.role === 'tool') continue
    if (message.role === 'system') out.push({ role: 'system', content: message.content })
    else if (message.role === 'user') out.push({ role: 'user', content: userContent(message.content) })
    else out.push(assistantMessage(message))
  }
  return out
}

function assistantMessage(message: AgentMessage & { role: 'assistant' }): ChatMessage {
  const calls = message.toolCalls ?? []
  if (calls.length === 0) return { role: 'assistant', content: message.content }
  return {
    role: 'assistant',
    content: message.content === '' ? null : message.content,
    tool_calls: calls.map((call) => ({ id: call.callId, type: 'function', function: { name: call.name, arguments: argumentsText(call) } })),
  }
}

function userContent(content: AgentMessage & { role: 'user' } extends { content: infer C } ? C : never): string | ChatContentPart[] {
  if (typeof content === 'string') return content
  return content.map((block): ChatContentPart =>
    block.type === 'image' ? { type: 'image_url', image_url: { url: `data:${block.mimeType};base64,${block.data}` } } : { type: 'text', text: blockText(block) },
  )
}

/** An image, or audio in a format the API takes, as a user-message part; anything else stays text. */
function mediaPart(block: ToolResult['content'][number]): ChatContentPart | undefined {
  if (block.type === 'image') return { type: 'image_url', image_url: { url: `data:${block.mimeType};base64,${block.data}` } }
  const format = block.type === 'audio' ? AUDIO_FORMATS[block.mimeType] : undefined
  return format && block.type === 'audio' ? { type: 'input_audio', input_audio: { data: block.data, format } } : undefined
}

function toolText(result: ToolResult, text: readonly string[]): string {
  const joined = text.join('\n')
  return joined === '' ? emptyText(result) : joined
}

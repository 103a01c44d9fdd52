import type { AgentCapabilities, ToolCapability } from '../seams/capabilities.js'
import type { ToolCall } from '../seams/calls.js'
import type { JsonSchema } from '../seams/types.js'
import { type AgentMessage, argumentsText, batches, type ToolResult } from './messages.js'
import { functionDefinitions, type OpenAiToolOptions, remember, toToolCall } from './openai-tools.js'
import { blockText, contextsOf, contextText, emptyText } from './placement.js'

/** A Responses API function tool (`tools[]` of a request). */
export interface ResponsesTool {
  type: 'function'
  name: string
  description: string
  parameters: JsonSchema
  strict: boolean
}

export type ResponsesInputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' }

/** A function call item of a response's `output` (and of the input that sends it back). */
export interface ResponsesFunctionCall {
  type: 'function_call'
  call_id: string
  name: string
  arguments: string
  id?: string | undefined
  status?: ResponsesItemStatus | undefined
}

/** An assistant message item of a response's `output`. */
export interface ResponsesOutputMessage {
  type: 'message'
  role: 'assistant'
  content: { type: 'output_text'; text: string; annotations?: unknown[] | undefined }[]
  id?: string | undefined
  status?: ResponsesItemStatus | undefined
}

type ResponsesItemStatus = 'in_progress' | 'completed' | 'incomplete'

/**
 * The items of a response's `output` a tool loop reads: `fromResponsesOutput` takes the calls. A
 * function call goes back into the input as it is; a message as `{ role: 'assistant', content }`.
 */
export type ResponsesOutputItem = ResponsesFunctionCall | ResponsesOutputMessage

/** The Responses API input items these adapters write, and the function calls a loop sends back. */
export type ResponsesItem =
  | { role: 'system' | 'developer' | 'assistant'; content: string }
  | { role: 'user'; content: string | ResponsesInputContent[] }
  | ResponsesFunctionCall
  | { type: 'function_call_output'; call_id: string; output: string | ResponsesInputContent[] }

/** The turn's tools as Responses `tools`; keep the array to pass to `fromResponsesOutput`. */
export function toResponsesTools(capabilities: AgentCapabilities | readonly ToolCapability[], options: OpenAiToolOptions = {}): ResponsesTool[] {
  const definitions = functionDefinitions(capabilities, options)
  const tools = definitions.map((d): ResponsesTool => ({ type: 'function', name: d.name, description: d.description, parameters: d.parameters, strict: d.strict }))
  return remember(tools, capabilities, definitions)
}

/** The `function_call` items of a response's `output`, in model order; other items are skipped. */
export function fromResponsesOutput(items: readonly unknown[], tools?: readonly ResponsesTool[]): ToolCall[] {
  const calls: ToolCall[] = []
  for (const item of items) {
    const call = item as Partial<{ type: string; call_id: string; name: string; arguments: string }>
    if (call.type !== 'function_call' || typeof call.call_id !== 'string' || typeof call.name !== 'string') continue
    calls.push(toToolCall(call.call_id, call.name, call.arguments ?? '', tools))
  }
  return calls
}

/**
 * One batch's results as `function_call_output` items in model order (images ride in the output,
 * which the Responses API accepts), then a `user` message with the batch's deferred contexts.
 */
export function toResponsesItems(results: readonly ToolResult[]): ResponsesItem[] {
  const items: ResponsesItem[] = results.map((result) => ({ type: 'function_call_output', call_id: result.callId, output: output(result) }))
  const contexts = contextsOf(results)
  if (contexts.length > 0) items.push({ role: 'user', content: contexts.map((context) => ({ type: 'input_text', text: contextText(context) })) })
  return items
}

/** A provider-neutral conversation as Responses input items (system messages included). */
export function toResponsesHistory(messages: readonly AgentMessage[]): ResponsesItem[] {
  const out: ResponsesItem[] = []
  for (const item of batches(messages, (m): m is AgentMessage & { role: 'tool' } => m.role === 'tool')) {
    if (Array.isArray(item)) {
      out.push(...toResponsesItems(item.map((m) => m.result)))
      continue
    }
    const message = item as AgentMessage
    if (message.role === 'system') out.push({ role: 'system', content: message.content })
    else if (message.role === 'user') out.push({ role: 'user', content: userContent(message.content) })
    else if (message.role === 'assistant') {
      if (message.content !== '') out.push({ role: 'assistant', content: message.content })
      for (const call of message.toolCalls ?? []) out.push({ type: 'function_call', call_id: call.callId, name: call.name, arguments: argumentsText(call) })
    }
  }
  return out
}

function output(result: ToolResult): string | ResponsesInputContent[] {
  if (!result.content.some((block) => block.type === 'image')) {
    const text = result.content.map(blockText).join('\n')
    return text === '' ? emptyText(result) : text
  }
  return inputContent(result.content)
}

function userContent(content: string | ToolResult['content']): string | ResponsesInputContent[] {
  return typeof content === 'string' ? content : inputContent(content)
}

function inputContent(content: ToolResult['content']): ResponsesInputContent[] {
  return content.map((block): ResponsesInputContent =>
    block.type === 'image'
      ? { type: 'input_image', image_url: `data:${block.mimeType};base64,${block.data}`, detail: 'auto' }
      : { type: 'input_text', text: blockText(block) },
  )
}

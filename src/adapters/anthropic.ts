/** Anthropic Messages mappings (the `seam-runtime/anthropic` entry re-exports them). */
import type { AgentCapabilities, ToolCapability } from '../seams/capabilities.js'
import type { ContentBlock } from '../seams/journal.js'
import type { ToolCall } from '../seams/calls.js'
import type { JsonSchema } from '../seams/types.js'
import { type AgentMessage, batches, type ToolResult, toolsOf } from './messages.js'
import { blockText, contextsOf, contextText, emptyText } from './placement.js'

/** An Anthropic Messages tool (`tools[]` of a request). */
export interface AnthropicTool {
  name: string
  description: string
  input_schema: JsonSchema & { type: 'object' }
}

export type AnthropicTextBlock = { type: 'text'; text: string }
export type AnthropicImageBlock = { type: 'image'; source: { type: 'base64'; media_type: AnthropicImageType; data: string } }
export type AnthropicImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'
export type AnthropicToolUseBlock = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
export type AnthropicToolResultBlock = {
  type: 'tool_result'
  tool_use_id: string
  content: Array<AnthropicTextBlock | AnthropicImageBlock>
  is_error?: boolean
}
export type AnthropicBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicToolUseBlock | AnthropicToolResultBlock

export interface AnthropicMessage {
  role: 'user' | 'assistant'
  content: AnthropicBlock[]
}

const IMAGE_TYPES: ReadonlySet<string> = new Set<AnthropicImageType>(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])

/** The turn's tools as Messages `tools`. */
export function toAnthropicTools(capabilities: AgentCapabilities | readonly ToolCapability[]): AnthropicTool[] {
  return toolsOf(capabilities).map((tool) => {
    const { $schema: _, ...schema } = tool.parameters
    return { name: tool.name, description: tool.description, input_schema: { ...schema, type: 'object' } }
  })
}

/** The `tool_use` blocks of an assistant message's content, in model order. */
export function fromAnthropicContent(content: readonly unknown[]): ToolCall[] {
  const calls: ToolCall[] = []
  for (const block of content) {
    const use = block as Partial<AnthropicToolUseBlock>
    if (use.type !== 'tool_use' || typeof use.id !== 'string' || typeof use.name !== 'string') continue
    const input = use.input
    calls.push({ callId: use.id, name: use.name, arguments: input !== null && typeof input === 'object' ? input : {} })
  }
  return calls
}

/**
 * One batch's results as the content of the user message that answers the assistant's `tool_use`
 * blocks: one `tool_result` per call in model order (text and image blocks; `is_error` unless the
 * call completed), then the batch's deferred contexts as text blocks.
 */
export function toAnthropicToolResults(results: readonly ToolResult[]): Array<AnthropicToolResultBlock | AnthropicTextBlock> {
  const blocks: Array<AnthropicToolResultBlock | AnthropicTextBlock> = results.map((result) => {
    const content = result.content.map(toBlock)
    const block: AnthropicToolResultBlock = {
      type: 'tool_result',
      tool_use_id: result.callId,
      content: content.length > 0 ? content : [{ type: 'text', text: emptyText(result) }],
    }
    if (result.status !== 'completed') block.is_error = true
    return block
  })
  for (const context of contextsOf(results)) blocks.push({ type: 'text', text: contextText(context) })
  return blocks
}

/**
 * A provider-neutral conversation as Messages `system` and `messages`: system messages join the
 * `system` text, consecutive messages of one role merge (the API alternates roles), an
 * assistant message without text or calls is left out (the API refuses empty text), and a history
 * that starts with the assistant (a journal transcript alone) gets a user message saying so first.
 */
export function toAnthropicHistory(messages: readonly AgentMessage[]): { system?: string; messages: AnthropicMessage[] } {
  const system: string[] = []
  const out: AnthropicMessage[] = []
  const push = (role: AnthropicMessage['role'], content: AnthropicBlock[]) => {
    if (content.length === 0) return
    const last = out.at(-1)
    if (last?.role === role) last.content.push(...content)
    else out.push({ role, content })
  }
  for (const item of batches(messages, (m): m is AgentMessage & { role: 'tool' } => m.role === 'tool')) {
    if (Array.isArray(item)) {
      push('user', toAnthropicToolResults(item.map((m) => m.result)))
      continue
    }
    const message = item as AgentMessage
    if (message.role === 'system') system.push(message.content)
    else if (message.role === 'user') push('user', typeof message.content === 'string' ? textBlocks(message.content) : message.content.map(toBlock))
    else if (message.role === 'assistant') {
      const uses = (message.toolCalls ?? []).map((call): AnthropicToolUseBlock => ({ type: 'tool_use', id: call.callId, name: call.name, input: inputOf(call) }))
      push('assistant', [...textBlocks(message.content), ...uses])
    }
  }
  // The API wants a user message first; a transcript from the journal alone starts with a call.
  if (out[0]?.role === 'assistant') out.unshift({ role: 'user', content: [{ type: 'text', text: '(the conversation before this was not recorded)' }] })
  return system.length > 0 ? { system: system.join('\n\n'), messages: out } : { messages: out }
}

function toBlock(block: ContentBlock): AnthropicTextBlock | AnthropicImageBlock {
  if (block.type === 'image' && IMAGE_TYPES.has(block.mimeType)) {
    return { type: 'image', source: { type: 'base64', media_type: block.mimeType as AnthropicImageType, data: block.data } }
  }
  return { type: 'text', text: blockText(block) }
}

function textBlocks(text: string): AnthropicTextBlock[] {
  return text.trim() === '' ? [] : [{ type: 'text', text }]
}

/** `tool_use.input` must be an object: arguments that are not a JSON object become `{}`. */
function inputOf(call: ToolCall): Record<string, unknown> {
  if (typeof call.arguments !== 'string') return { ...call.arguments }
  try {
    const parsed = JSON.parse(call.arguments === '' ? '{}' : call.arguments) as unknown
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

// A host's tool loops over each model API, typed only with what seam-runtime exports (no provider
// SDK). Never run: test/host-loop-types.test.ts compiles it against the built package under
// `strict` and `exactOptionalPropertyTypes`, as a host project would.
import type { Turn } from 'seam-runtime'
import { aiSdkTools, ToolOutcomeError } from 'seam-runtime/ai-sdk'
import { type AnthropicMessage, type AnthropicTool, fromAnthropicContent, toAnthropicToolResults, toAnthropicTools } from 'seam-runtime/anthropic'
import {
  type ChatAssistantMessage,
  type ChatMessage,
  type ChatTool,
  fromChatToolCalls,
  fromResponsesOutput,
  type ResponsesItem,
  type ResponsesOutputItem,
  type ResponsesTool,
  toChatMessages,
  toChatTools,
  toResponsesItems,
  toResponsesTools,
} from 'seam-runtime/openai'

/** Posts a request body and answers the parsed JSON reply (a `fetch` in a real host). */
type Post<Reply> = (body: unknown) => Promise<Reply>

interface ChatReply {
  choices: { message: ChatAssistantMessage; finish_reason: string }[]
}

export async function chatLoop(turn: Turn, post: Post<ChatReply>): Promise<string | null> {
  const tools: ChatTool[] = toChatTools(turn.capabilities, { strict: true })
  const messages: ChatMessage[] = [{ role: 'user', content: 'Check ticket T-1.' }]
  for (;;) {
    const reply = await post({ model: 'gpt', messages, tools })
    const message = reply.choices[0]?.message
    if (message === undefined) return null
    messages.push(message)
    const calls = fromChatToolCalls(message, tools)
    if (calls.length === 0) return message.content
    messages.push(...toChatMessages(await turn.tools.executeBatch(calls)))
    // Any message of the history, typed as the union, is accepted too (none but an assistant's has calls).
    const last: ChatMessage | undefined = messages.at(-1)
    if (last !== undefined) fromChatToolCalls(last, tools)
  }
}

interface ResponsesReply {
  output: ResponsesOutputItem[]
}

export async function responsesLoop(turn: Turn, post: Post<ResponsesReply>): Promise<number> {
  const tools: ResponsesTool[] = toResponsesTools(turn.capabilities, { strict: true })
  const input: ResponsesItem[] = [{ role: 'user', content: 'Check ticket T-1.' }]
  for (;;) {
    const { output } = await post({ model: 'gpt', input, tools })
    for (const item of output) input.push(item.type === 'message' ? { role: 'assistant', content: item.content.map((part) => part.text).join('') } : item)
    const calls = fromResponsesOutput(output, tools)
    if (calls.length === 0) return input.length
    input.push(...toResponsesItems(await turn.tools.executeBatch(calls)))
  }
}

export async function anthropicLoop(turn: Turn, post: Post<AnthropicMessage>): Promise<number> {
  const tools: AnthropicTool[] = toAnthropicTools(turn.capabilities)
  const messages: AnthropicMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Check ticket T-1.' }] }]
  for (;;) {
    const reply = await post({ model: 'claude', max_tokens: 1024, messages, tools })
    messages.push({ role: 'assistant', content: reply.content })
    const calls = fromAnthropicContent(reply.content)
    if (calls.length === 0) return messages.length
    messages.push({ role: 'user', content: toAnthropicToolResults(await turn.tools.executeBatch(calls)) })
  }
}

export async function aiSdkStep(turn: Turn, name: string): Promise<string | undefined> {
  const tool = aiSdkTools(turn)[name]
  try {
    await tool?.execute?.({}, { toolCallId: 'c1', messages: [] })
    return undefined
  } catch (error) {
    return error instanceof ToolOutcomeError ? error.outcome.code : String(error)
  }
}

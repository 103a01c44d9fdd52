/**
 * `seam-runtime/openai`: a turn's tools and outcomes in OpenAI's Chat Completions and Responses
 * wire formats, both ways. Pure mappings: no OpenAI SDK is loaded.
 */
export { fromChatToolCalls, toChatHistory, toChatMessages, toChatTools } from './adapters/openai-chat.js'
export type { ChatAssistantMessage, ChatContentPart, ChatMessage, ChatTool, ChatToolCall } from './adapters/openai-chat.js'
export { fromResponsesOutput, toResponsesHistory, toResponsesItems, toResponsesTools } from './adapters/openai-responses.js'
export type {
  ResponsesFunctionCall,
  ResponsesInputContent,
  ResponsesItem,
  ResponsesOutputItem,
  ResponsesOutputMessage,
  ResponsesTool,
} from './adapters/openai-responses.js'
export type { OpenAiToolOptions } from './adapters/openai-tools.js'
export { dropStrictNulls, toStrictSchema } from './adapters/strict-schema.js'
export type { StrictSchemaResult } from './adapters/strict-schema.js'
export { skillInstructions } from './adapters/placement.js'
export type { AgentMessage, ToolResult } from './adapters/messages.js'

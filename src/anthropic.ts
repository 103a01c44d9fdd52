/**
 * `seam-runtime/anthropic`: a turn's tools and outcomes in the Anthropic Messages wire format, both
 * ways. Pure mappings: no Anthropic SDK is loaded.
 */
export { fromAnthropicContent, toAnthropicHistory, toAnthropicToolResults, toAnthropicTools } from './adapters/anthropic.js'
export type {
  AnthropicBlock,
  AnthropicImageBlock,
  AnthropicImageType,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
} from './adapters/anthropic.js'
export { skillInstructions } from './adapters/placement.js'
export type { AgentMessage, ToolResult } from './adapters/messages.js'

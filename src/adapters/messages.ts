import type { DeferredContext } from '../seams/calls.js'
import type { ContentBlock } from '../seams/journal.js'
import type { ToolCall, ToolCallOutcome } from '../seams/calls.js'
import type { AgentCapabilities, ToolCapability } from '../seams/capabilities.js'

/**
 * What the adapters need of a settled call: a `ToolCallOutcome` is one, and so is a result rebuilt
 * from the journal by `transcript` (which has no value and no details).
 */
export type ToolResult = Pick<ToolCallOutcome, 'callId' | 'name' | 'status' | 'code' | 'policy' | 'reason' | 'content'> & {
  readonly contexts?: readonly DeferredContext[]
}

/**
 * One message of a provider-neutral conversation. Each adapter turns a list of these into its
 * API's history (`toChatHistory`, `toResponsesHistory`, `toAnthropicHistory`); consecutive `tool`
 * messages are one batch and keep the order of the assistant's calls.
 */
export type AgentMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string | readonly ContentBlock[] }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls?: readonly ToolCall[] }
  | { readonly role: 'tool'; readonly result: ToolResult }

/** Consecutive items that satisfy `inBatch` come out as one array, the rest one by one. */
export function* batches<T, B extends T>(items: readonly T[], inBatch: (item: T) => item is B): Generator<T | B[]> {
  let batch: B[] = []
  for (const item of items) {
    if (inBatch(item)) {
      batch.push(item)
      continue
    }
    if (batch.length > 0) yield batch
    batch = []
    yield item
  }
  if (batch.length > 0) yield batch
}

/** The arguments of a call as the JSON text the model APIs carry. */
export function argumentsText(call: ToolCall): string {
  return typeof call.arguments === 'string' ? (call.arguments.trim() === '' ? '{}' : call.arguments) : JSON.stringify(call.arguments)
}

/** Adapters take a turn's capabilities or just their tools. */
export function toolsOf(capabilities: AgentCapabilities | readonly ToolCapability[]): readonly ToolCapability[] {
  return Array.isArray(capabilities) ? capabilities : (capabilities as AgentCapabilities).tools
}

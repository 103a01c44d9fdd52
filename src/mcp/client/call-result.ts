import { OAuthClientFlowError, OAuthError, ProtocolError, SdkError, SdkErrorCode, UnauthorizedError } from '@modelcontextprotocol/client'
import type { ContentBlock } from '../../seams/content.js'
import type { ToolExecutionResult } from '../../seams/types.js'
import { type Redactor, safeMessage } from './redact.js'

/**
 * Maps `tools/call` answers and failures to `ToolExecutionResult`s. Outcomes are values: a tool that
 * reports `isError`, a protocol fault (unknown tool, invalid params), a timeout or a lost connection
 * all become `{ success: false }` with a `metadata.code` the host can branch on.
 */

export const MAX_ERROR_CHARS = 8_192

/** The SDK's local errors that say nothing about the connection's health. */
const HEALTHY_SDK_CODES: ReadonlySet<string> = new Set([
  SdkErrorCode.RequestTimeout,
  SdkErrorCode.InvalidResult,
  SdkErrorCode.UnsupportedResultType,
  SdkErrorCode.InputRequiredRoundsExceeded,
  SdkErrorCode.ListPaginationExceeded,
  SdkErrorCode.MethodNotSupportedByProtocolVersion,
  SdkErrorCode.CapabilityNotSupported,
])

/**
 * Success arrives intact: the server's content blocks are the model-facing `content` (MCP blocks
 * and outcome blocks have the same shapes; the pipeline checks and copies them), and its
 * `structuredContent` is the `output` value (checked against the tool's `outputSchema` by the SDK
 * and again by the pipeline). A result with neither is an empty text block's worth: no content.
 */
export function fromCallResult(toolName: string, result: unknown, redact: Redactor): ToolExecutionResult {
  const { content, structuredContent, isError } = (result ?? {}) as {
    content?: unknown
    structuredContent?: unknown
    isError?: unknown
  }
  const blocks = Array.isArray(content) ? content : []
  if (isError === true) {
    const text = textOf(blocks) || `MCP tool "${toolName}" reported an error`
    return { success: false, error: clip(redact(text)), metadata: { code: 'tool_error' } }
  }
  const success: ToolExecutionResult = { success: true }
  if (structuredContent !== undefined) success.output = structuredContent
  // Empty content says nothing to the model: the value (if any) is rendered as JSON instead.
  if (blocks.length > 0 || structuredContent === undefined) success.content = blocks as ContentBlock[]
  return success
}

export interface CallFailureContext {
  serverId: string
  toolName: string
  timeoutMs: number
  redact: Redactor
}

/** A failed `tools/call` as a value. The caller handles its own abort before asking. */
export function fromCallError(error: unknown, context: CallFailureContext): ToolExecutionResult {
  const { serverId, toolName, timeoutMs, redact } = context
  if (ProtocolError.isInstance(error)) {
    return { success: false, error: clip(redact(error.message)), metadata: { code: 'protocol_error', rpcCode: error.code } }
  }
  if (SdkError.isInstance(error) && error.code === SdkErrorCode.RequestTimeout) {
    return {
      success: false,
      error: `MCP tool "${toolName}" timed out after ${timeoutMs} ms`,
      metadata: { code: 'timeout', timeoutMs },
    }
  }
  if (isConnectionFailure(error)) {
    return {
      success: false,
      error: clip(`MCP server "${serverId}" failed during "${toolName}": ${safeMessage(error, redact)}`),
      metadata: { code: 'connection_lost' },
    }
  }
  return {
    success: false,
    error: clip(`MCP tool "${toolName}" failed: ${safeMessage(error, redact)}`),
    metadata: { code: 'client_error', sdkCode: SdkError.isInstance(error) ? error.code : null },
  }
}

/**
 * Whether an error means the server may be unreachable. Protocol errors are answers, and some SDK
 * errors are local verdicts; everything else (fetch failures, a closed pipe) is worth a health check.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (ProtocolError.isInstance(error)) return false
  // An authorization failure is the server answering: probing it would only start another sign-in.
  if (UnauthorizedError.isInstance(error) || OAuthError.isInstance(error) || OAuthClientFlowError.isInstance(error)) return false
  if (SdkError.isInstance(error)) return !HEALTHY_SDK_CODES.has(error.code)
  return true
}

function textOf(blocks: unknown[]): string {
  return blocks
    .map((block) => (block as { type?: unknown; text?: unknown } | null) ?? {})
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('\n')
    .trim()
}

function clip(text: string): string {
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text
}

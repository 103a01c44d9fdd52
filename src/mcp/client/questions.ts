import type { ElicitRequestParams, ElicitResult } from '@modelcontextprotocol/client'
import type { ToolInvocationContext } from '../../seams/types.js'
import type { Redactor } from './redact.js'

/**
 * A mounted server's question (`elicitation/create`, an `input_required` round, a task's input
 * request) asked as the call's own `ctx.ask`, which the turn journals and puts to its question port.
 * Without a call to ask for (or one that cannot ask), for a URL-mode question, or for a schema
 * seam-runtime refuses (`INVALID_QUESTION`), the answer is `decline`: the server decides what then.
 * An accepted answer carries the schema's defaults for the fields the person left unanswered
 * (SEP-1034); the message reaches the person redacted.
 */
export async function askThrough(context: ToolInvocationContext | undefined, params: ElicitRequestParams, signal: AbortSignal, redact: Redactor): Promise<ElicitResult> {
  if (context?.ask === undefined || params.mode === 'url' || !('requestedSchema' in params)) return { action: 'decline' }
  let answer: Awaited<ReturnType<NonNullable<ToolInvocationContext['ask']>>>
  try {
    answer = await context.ask({ message: redact(params.message), schema: params.requestedSchema as never })
  } catch {
    return { action: 'decline' }
  }
  if (signal.aborted) return { action: 'cancel' }
  if (answer.action !== 'accept') return { action: answer.action }
  return { action: 'accept', content: withDefaults(params.requestedSchema, answer.content) as ElicitResult['content'] }
}

/** `content` with each top-level property's `default` where the person gave no value. */
export function withDefaults(schema: unknown, content: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const filled: Record<string, unknown> = { ...content }
  const properties = (schema as { properties?: Record<string, { default?: unknown } | null> } | null)?.properties ?? {}
  for (const [name, property] of Object.entries(properties)) {
    // Defined, not assigned: a server's property named `__proto__` stays a plain field.
    if (!Object.hasOwn(filled, name) && property?.default !== undefined) Object.defineProperty(filled, name, { value: property.default, enumerable: true, writable: true, configurable: true })
  }
  return filled
}

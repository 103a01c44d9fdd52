import { redactArguments, redactSecrets, truncateText } from '../runtime/base/privacy.js'
import { redactText, scrubValues } from '../runtime/base/redact.js'
import type { ToolCallOutcome } from '../seams/calls.js'

/**
 * Arguments and results as a span may carry them, when the host opted in: the journal's redaction
 * (values under secret-looking keys replaced, at any depth) and its size bound (a prefix plus a
 * length and sha256 marker).
 */

export function recordedArguments(raw: string | undefined, maxBytes: number): string | undefined {
  return raw === undefined ? undefined : truncateText(redactArguments(raw), maxBytes)
}

/** The outcome's value as redacted JSON, else its content (JSON text redacted like arguments). */
export function recordedResult(outcome: ToolCallOutcome, maxBytes: number): string | undefined {
  let text: string | undefined
  if (outcome.value !== undefined) {
    try {
      text = JSON.stringify(redactSecrets(outcome.value))
    } catch {
      text = undefined
    }
  }
  text ??= outcome.content.map((block) => (block.type === 'text' ? redactArguments(block.text) : `[${block.type}]`)).join('\n')
  return truncateText(text, maxBytes)
}

/** A reason or other diagnostic string (a risk reason, a guard's, a reload's error), redacted and bounded. */
export function bounded(text: string, maxBytes: number): string {
  return truncateText(redactText(text), maxBytes)
}

/** A tool name as spans and metrics carry it: a model's text, so scrubbed of known secret values. */
export function spanName(name: string, maxChars: number): string {
  // Scrubbed before it is cut: a cut through a secret would leave a prefix nothing recognises.
  const scrubbed = scrubValues(name)
  return scrubbed.length > maxChars ? scrubbed.slice(0, maxChars) : scrubbed
}

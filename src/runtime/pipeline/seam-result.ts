/**
 * What a seam tool's run makes of its provider's answer (`ToolService.execute`): a result for
 * `decide`, or a failure naming the service when the answer is not one a provider may give.
 */
import type { ToolExecutionResult } from '../../seams/types.js'
import type { CallState } from './state.js'
import type { DispatchResult } from '../../seams/calls.js'

/** The tool service's id, for a seam tool. */
export function seamId(state: CallState): string | undefined {
  const { binding } = state
  return binding?.kind === 'seam' ? binding.service.id : undefined
}

export function seamResult(r: ToolExecutionResult | undefined, serviceId: string): DispatchResult {
  if (r?.success === true) {
    if (r.content === undefined) return { ok: true, value: r.output }
    if (!Array.isArray(r.content)) return { ok: false, error: `the tool service "${serviceId}" returned content that is not an array of blocks` }
    return { ok: true, value: r.output, content: r.content }
  }
  if (r?.success === false) return { ok: false, error: String(r.error), details: r.metadata ? { metadata: r.metadata } : undefined }
  return { ok: false, error: `the tool service "${serviceId}" returned an invalid result` }
}

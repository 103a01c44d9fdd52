import type { ToolCapability } from '../../seams/capabilities.js'
import { definitionOf } from '../generations/feature-capability.js'

/**
 * Whether every call of `tool` asks a person: `always`, or `on-risk` (the default when a tool sets
 * no `approval`) with nothing to tell a safe call from a risky one: no `risk(args)` and no
 * `readOnlyHint`. Such a tool is denied wherever no one can answer (no terminal, unattended turns).
 */
export function asksEveryCall(tool: ToolCapability): boolean {
  if (tool.approval === 'always') return true
  if (tool.approval !== 'on-risk' || (tool.annotations?.readOnlyHint === true && tool.trustAnnotations !== false)) return false
  return typeof definitionOf(tool)?.risk !== 'function'
}

/** Only the default's case: `on-risk` by omission that asks every call (what `seam dev` warns about). */
export function asksEveryCallByDefault(tool: ToolCapability): boolean {
  return tool.approval === 'on-risk' && asksEveryCall(tool)
}

import { deepFreeze } from '../../features/schema.js'
import { definitionOf } from '../generations/feature-capability.js'
import { validators } from '../../features/validation.js'
import type { ToolBinding } from '../generations/tool-binding.js'
import type { CallState } from './state.js'

/**
 * Whether a call may overlap others: only when its tool's `isConcurrencySafe(args)` returns
 * exactly `true`, or its seam schema says `concurrencySafe: true`. Unknown, invalid, undeclared
 * or throwing classifications are exclusive. Cheap enough to run again right before a start.
 */
export function classify(state: CallState): boolean {
  const binding = state.ctx.tools.get(state.call.name)
  if (binding === undefined) return false
  const { capability } = binding
  if (capability.kind === 'seam') return capability.concurrencySafe === true && parse(state, binding) !== undefined
  const classifier = definitionOf(capability)?.isConcurrencySafe
  if (typeof classifier !== 'function') return false
  const args = parse(state, binding)
  if (args === undefined) return false
  try {
    return classifier(args as never) === true
  } catch {
    return false
  }
}

/** The call's arguments as its tool's schema reads them; parsed once per call, frozen (classifiers are user code). */
function parse(state: CallState, binding: ToolBinding): Readonly<Record<string, unknown>> | undefined {
  if (state.classifyArgs === undefined) state.classifyArgs = parseOnce(state, binding) ?? null
  return state.classifyArgs ?? undefined
}

function parseOnce(state: CallState, binding: ToolBinding): Readonly<Record<string, unknown>> | undefined {
  try {
    return parseForClassifier(state, binding)
  } catch {
    // A schema whose refinement throws: exclusive here; the arguments stage reports the failure.
    return undefined
  }
}

function parseForClassifier(state: CallState, binding: ToolBinding): Readonly<Record<string, unknown>> | undefined {
  const raw = state.call.arguments
  let args: unknown
  try {
    args = typeof raw === 'string' ? (raw.trim() === '' ? {} : JSON.parse(raw)) : raw
  } catch {
    return undefined
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return undefined
  const { capability } = binding
  const definition = definitionOf(capability)
  // The validator the arguments stage uses (`ToolPlan.validateInput`), without a cache lookup per call.
  const validate =
    binding.kind === 'feature' && binding.plan.definition === definition
      ? binding.plan.validateInput
      : validators.forSchema(definition ? definition.input : capability.parameters, definition === undefined)
  const result = validate(args)
  if (!result.ok) return undefined
  const value = result.value as Record<string, unknown>
  // Freeze only what this module parsed: object arguments may be the caller's own objects.
  return typeof raw === 'string' ? deepFreeze(value) : value
}

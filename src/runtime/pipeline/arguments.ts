import { messageOf } from '../../errors.js'
import { deepFreeze } from '../../features/schema.js'
import { findLossy } from '../lossless.js'
import { describeIssues, validators } from '../validation.js'
import { type CallState, notStarted, settle } from './state.js'

/**
 * Stage 3: parse the raw JSON (empty → `{}`), snapshot it losslessly, validate it (zod for
 * `defineTool`, Ajv for seam JSON Schemas) and deep-freeze it. Failures are worded for a retry.
 */
export function parseArguments(state: CallState): void {
  const { call, capability, binding } = state
  if (!capability || !binding) return
  // In a batch the classifier already parsed these exact arguments against this schema, and froze them.
  if (state.classifyArgs && typeof call.arguments === 'string') {
    accept(state, state.classifyArgs)
    return
  }
  let args: unknown
  if (typeof call.arguments === 'string') {
    const raw = call.arguments
    try {
      // JSON.parse skips surrounding white space itself; only an empty (or blank) text means `{}`.
      args = JSON.parse(raw)
    } catch (error) {
      if (raw.trim() === '') {
        args = {}
      } else {
        invalid(state, `the arguments are not valid JSON (${messageOf(error)}). Send one JSON object.`, [])
        return
      }
    }
  } else {
    const lossy = findLossy(call.arguments)
    if (lossy) {
      invalid(state, `the arguments are not plain JSON at ${lossy.path}: ${lossy.problem}.`, [lossy])
      return
    }
    // Lossless, so the journaled text is an exact copy: parsing it is much cheaper than structuredClone.
    args = state.raw === undefined ? structuredClone(call.arguments) : JSON.parse(state.raw)
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    invalid(state, 'the arguments must be one JSON object, not ' + (Array.isArray(args) ? 'an array' : String(args)) + '.', [])
    return
  }
  const schema = binding.kind === 'feature' ? binding.slot.definition.input : capability.parameters
  const result = validators.forSchema(schema, binding.kind === 'seam')(args)
  if (!result.ok) {
    invalid(
      state,
      `the arguments do not match the tool's input schema: ${describeIssues(result.issues)}. Fix these fields and call the tool again.`,
      result.issues,
    )
    return
  }
  accept(state, deepFreeze(result.value as Record<string, unknown>))
}

function accept(state: CallState, args: Readonly<Record<string, unknown>>): void {
  state.args = args
}

function invalid(state: CallState, message: string, issues: readonly { path: string }[]): void {
  settle(state, {
    status: 'failed',
    code: 'INVALID_ARGS',
    message: `Invalid arguments for "${state.call.name}": ${message}`,
    details: { fields: issues.map((i) => i.path) },
  })
}

/** Between stages: a caller abort before the body starts settles without running anything more. */
export function checkAbort(state: CallState): void {
  if (state.signal.aborted) settle(state, notStarted(state.call.name))
}

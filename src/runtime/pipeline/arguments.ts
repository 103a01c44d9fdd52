import { messageOf } from '../../errors.js'
import { deepFreeze } from '../../features/schema.js'
import { findLossy } from '../base/lossless.js'
import { describeIssues, validators } from '../../features/validation.js'
import type { CallState } from './state.js'
import { settle } from './settle.js'
import { notStarted } from './settlement.js'

/**
 * Stage 3: parse the raw JSON (empty → `{}`), snapshot it losslessly, validate it (zod for
 * `defineTool`, Ajv for seam JSON Schemas) and deep-freeze it. Failures are worded for a retry.
 */
export function parseArguments(state: CallState): void {
  const { call, capability, binding } = state
  if (!capability || !binding) return
  // In a batch the classifier already parsed these exact arguments against this schema, and froze them.
  if (state.classifyArgs && typeof call.arguments === 'string' && !tooDeep(state.classifyArgs)) {
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
    let lossy: ReturnType<typeof findLossy>
    try {
      lossy = tooDeep(call.arguments) ? DEEP : findLossy(call.arguments)
    } catch (error) {
      // A getter (or a Proxy trap) that throws: the caller's object cannot be read as JSON.
      lossy = { path: '/', problem: `reading them threw (${messageOf(error)})` }
    }
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
  // Each level of nesting takes an opening and a closing bracket: shorter text cannot be too deep.
  if (typeof call.arguments === 'string' && call.arguments.length > 2 * MAX_ARGUMENT_DEPTH && tooDeep(args)) {
    invalid(state, `the arguments ${DEEP.problem}. Send a flatter object.`, [])
    return
  }
  const result = (binding.kind === 'feature' ? binding.plan.validateInput : validators.forSchema(capability.parameters, true))(args)
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

/**
 * How deeply arguments may nest. Validation, freezing and journaling walk them recursively; a
 * model's arguments nest a handful of levels, and a hostile 100,000 would overflow the stack.
 */
export const MAX_ARGUMENT_DEPTH = 64

const DEEP = { path: '/', problem: `nest more than ${MAX_ARGUMENT_DEPTH} levels deep (the limit)` }

/** Whether `value` nests deeper than the limit; stops there, so it cannot overflow the stack itself. */
function tooDeep(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return false
  if (depth >= MAX_ARGUMENT_DEPTH) return true
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) if (tooDeep(value[index], depth + 1)) return true
    return false
  }
  for (const key in value) if (tooDeep((value as Record<string, unknown>)[key], depth + 1)) return true
  return false
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

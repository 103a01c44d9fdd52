import type { ToolDefinition } from '../../features/define-tool.js'
import { type Validator, validators } from '../../features/validation.js'

/**
 * What a call reads of a `defineTool` definition, copied once into an instance of one class. A
 * definition is a frozen object, and V8 keeps the hidden class (map) of a frozen object alive only
 * while objects of it live: once the definitions of an earlier generation (a reload's, a closed
 * root's) are collected, the next definition of the same shape gets a new map, and every optimized
 * function of the call path that read a definition was thrown away and compiled again. Instances of
 * a class share the class's map for as long as the class lives, so the call path reads one map.
 * Methods are called with the definition as `this`, as when called on it.
 */
export class ToolPlan {
  readonly definition: ToolDefinition
  readonly execute: ToolDefinition['execute']
  readonly input: ToolDefinition['input']
  readonly output: ToolDefinition['output']
  readonly render: ToolDefinition['render']
  readonly risk: ToolDefinition['risk']
  readonly finalizeContent: ToolDefinition['finalizeContent']
  readonly idempotencyKey: ToolDefinition['idempotencyKey']
  readonly policyTimeoutMs: number | undefined
  #validateInput: Validator | undefined = undefined

  constructor(definition: ToolDefinition) {
    this.definition = definition
    this.execute = definition.execute
    this.input = definition.input
    this.output = definition.output
    this.render = definition.render
    this.risk = definition.risk
    this.finalizeContent = definition.finalizeContent
    this.idempotencyKey = definition.idempotencyKey
    this.policyTimeoutMs = definition.policyTimeoutMs
  }

  /** The input's validator, looked up on the first call and kept: no cache lookup per call. */
  get validateInput(): Validator {
    this.#validateInput ??= validators.forSchema(this.input)
    return this.#validateInput
  }
}

const plans = new WeakMap<ToolDefinition, ToolPlan>()

/** The plan of `definition`: one per definition, which is immutable (a tool that did not change keeps its plan). */
export function planOf(definition: ToolDefinition): ToolPlan {
  let plan = plans.get(definition)
  if (plan === undefined) {
    plan = new ToolPlan(definition)
    plans.set(definition, plan)
  }
  return plan
}

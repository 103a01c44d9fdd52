import type { AgentCapabilities, ToolCapability } from '../seams/capabilities.js'
import type { ToolCall } from '../seams/calls.js'
import type { JsonSchema } from '../seams/types.js'
import { toolsOf } from './messages.js'
import { dropStrictNulls, toStrictSchema } from './strict-schema.js'

export interface OpenAiToolOptions {
  /**
   * Ask for strict mode (Structured Outputs) on every tool whose schema converts (see
   * `toStrictSchema`); a tool whose schema cannot be strict is sent non-strict and reported to
   * `onNotStrict`, never dropped.
   */
  readonly strict?: boolean
  readonly onNotStrict?: (tool: string, reason: string) => void
}

/** One tool as both OpenAI APIs describe a function, before each wraps it its own way. */
export interface FunctionDefinition {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly strict: boolean
}

/** The original input schemas behind a tool list these adapters made, by tool name. */
const originals = new WeakMap<object, ReadonlyMap<string, JsonSchema>>()

export function functionDefinitions(capabilities: AgentCapabilities | readonly ToolCapability[], options: OpenAiToolOptions): FunctionDefinition[] {
  return toolsOf(capabilities).map((tool) => {
    if (options.strict) {
      const converted = toStrictSchema(tool.parameters)
      if (converted.ok) return { name: tool.name, description: tool.description, parameters: converted.schema, strict: true }
      options.onNotStrict?.(tool.name, converted.reason)
    }
    return { name: tool.name, description: tool.description, parameters: withoutDialect(tool.parameters), strict: false }
  })
}

/** Remembers which schemas `list` was made from, so calls against it can be mapped back. */
export function remember<T extends object>(list: T, capabilities: AgentCapabilities | readonly ToolCapability[], definitions: readonly FunctionDefinition[]): T {
  const strict = new Map<string, JsonSchema>()
  const tools = toolsOf(capabilities)
  definitions.forEach((definition, i) => {
    if (definition.strict) strict.set(definition.name, tools[i]!.parameters)
  })
  originals.set(list, strict)
  return list
}

/**
 * A model call as a `ToolCall`. With the tool list it was offered (`tools`), the `null`s strict
 * mode had the model send for optional properties are dropped again; arguments that are not JSON
 * stay as they are, for the pipeline to report as `INVALID_ARGS`.
 */
export function toToolCall(callId: string, name: string, args: string, tools: object | undefined): ToolCall {
  const schema = tools ? originals.get(tools)?.get(name) : undefined
  if (!schema || args.trim() === '') return { callId, name, arguments: args }
  try {
    return { callId, name, arguments: JSON.stringify(dropStrictNulls(JSON.parse(args), schema)) }
  } catch {
    return { callId, name, arguments: args }
  }
}

/** `$schema` names the dialect; the model APIs reject it or ignore it. */
function withoutDialect(schema: JsonSchema): JsonSchema {
  if (!('$schema' in schema)) return schema
  const { $schema: _, ...rest } = schema
  return rest
}

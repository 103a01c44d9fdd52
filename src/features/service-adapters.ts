import { randomUUID } from 'node:crypto'
import { messageOf, SeamError } from '../errors.js'
import type { SkillSpec, ToolDefinition } from './define-tool.js'
import { toJsonSchema } from './schema.js'
import { describeIssues, validators } from './validation.js'
import type { SkillService, ToolExecutionResult, ToolInvocationContext, ToolSchema, ToolService } from '../seams/types.js'
import type { NestedTools } from '../seams/calls.js'

type Entries<T> = ReadonlyMap<string, T> | { entries(): Iterable<[string, T]> }

/** One entry by name: a direct lookup for a map, a scan for any other registry (no copy per call). */
function entryOf<T>(registry: Entries<T>, name: string): T | undefined {
  if (registry instanceof Map) return (registry as ReadonlyMap<string, T>).get(name)
  for (const [key, value] of registry.entries()) if (key === name) return value
  return undefined
}

/**
 * Adapts a turn's `QuestionPort` as an `ask_user` tool for hosts that compose their own catalog.
 * Fails with a clear error when the turn has no question port (unattended turns never do).
 */
export class BuiltinToolService implements ToolService {
  readonly id: string
  readonly description = 'Built-in interaction tools (ask_user)'

  constructor(id = 'builtin') {
    this.id = id
  }

  schema(): ToolSchema[] {
    return [
      {
        type: 'function',
        function: {
          name: 'ask_user',
          description: 'Ask the person you are working for a question and wait for the answer.',
          parameters: {
            type: 'object',
            properties: {
              question: { type: 'string', minLength: 1, description: 'The question, in one or two sentences.' },
              choices: { type: 'array', items: { type: 'string' }, description: 'Optional answers to choose from.' },
            },
            required: ['question'],
            additionalProperties: false,
          },
        },
        approval: 'never',
        annotations: { readOnlyHint: true },
      },
    ]
  }

  async execute(_scope: string, toolName: string, input: unknown, context?: ToolInvocationContext): Promise<ToolExecutionResult> {
    if (toolName !== 'ask_user') return { success: false, error: `Unknown tool: ${toolName}` }
    const ask = context?.question?.ask
    if (!context?.question) return { success: false, error: 'ask_user needs an interactive turn: this turn has no question port' }
    if (ask === undefined) return { success: false, error: 'ask_user needs a question port that takes free-form questions (ask()); this turn’s has elicit() only' }
    const { question, choices } = input as { question: string; choices?: string[] }
    const requestId = `${context.callId}:${randomUUID()}`
    try {
      const answer = await ask.call(context.question, { requestId, question, choices, signal: context.signal })
      return { success: true, output: { answer }, metadata: { requestId } }
    } catch (error) {
      if (context.signal.aborted) throw error
      return { success: false, error: `the question could not be asked: ${messageOf(error)}`, metadata: { requestId } }
    }
  }
}

/** Bridges a generation-owned registry of `defineTool` definitions into the seam. */
export class ToolRegistryAsService implements ToolService {
  readonly id: string
  readonly description: string
  readonly #registry: Entries<ToolDefinition>

  constructor(id: string, registry: Entries<ToolDefinition>, description = `tool registry ${id}`) {
    this.id = id
    this.#registry = registry
    this.description = description
  }

  schema(): ToolSchema[] {
    return [...this.#registry.entries()].map(([name, tool]) => ({
      type: 'function',
      function: { name, description: tool.description, parameters: toJsonSchema(tool.input) },
      approval: tool.approval,
      permissions: tool.permissions,
      platforms: tool.platforms,
      scopes: tool.scopes,
      hidden: tool.hidden,
      annotations: tool.annotations,
    }))
  }

  async execute(_scope: string, toolName: string, input: unknown, context?: ToolInvocationContext): Promise<ToolExecutionResult> {
    const tool = entryOf(this.#registry, toolName)
    if (!tool) return { success: false, error: `Unknown tool: ${toolName}` }
    if (!context) return { success: false, error: 'Turn context required' }
    // The runtime validated these against the schema it was shown, without its `pattern`s (remote
    // schemas are untrusted): this provider validates its own, patterns included.
    const checked = validators.forSchema(tool.input)(input)
    if (!checked.ok) return { success: false, error: `invalid arguments: ${describeIssues(checked.issues)}` }
    const args = checked.value as Record<string, unknown>
    const deferred: string[] = []
    try {
      const output = await tool.execute(args, {
        signal: context.signal,
        callId: context.callId,
        turn: context.turn!,
        generation: context.generation,
        owner: context.owner,
        use: () => {
          throw new Error('resources are not available to tools bridged through ToolRegistryAsService')
        },
        deferContext: (m) => deferred.push(typeof m === 'string' ? m : m.content),
        progress: (p) => context.progress?.(p),
        ask: (q) => context.ask?.(q) ?? Promise.resolve({ action: 'decline' }),
        sample: (r) => context.sample?.(r) ?? Promise.reject(new SeamError('CLIENT_UNSUPPORTED', 'ctx.sample: this call has no client that samples')),
        roots: (q) => context.roots?.(q) ?? Promise.reject(new SeamError('CLIENT_UNSUPPORTED', 'ctx.roots: this call has no client that lists roots')),
        log: { debug() {}, info() {}, warn() {} },
        tools: context.tools ?? NO_NESTED_TOOLS,
      })
      return { success: true, output }
    } catch (error) {
      if (context.signal.aborted) throw error
      return { success: false, error: messageOf(error) }
    }
  }
}

/** Bridges a generation-owned registry of skills: `catalog()` lists, `describe()` reads instructions. */
export class SkillRegistryAsService implements SkillService {
  readonly id: string
  readonly description: string
  readonly #registry: Entries<SkillSpec>

  constructor(id: string, registry: Entries<SkillSpec>, description = `skill registry ${id}`) {
    this.id = id
    this.#registry = registry
    this.description = description
  }

  async catalog(): Promise<{ name: string; description: string }[]> {
    return [...this.#registry.entries()].map(([name, skill]) => ({ name, description: skill.description }))
  }

  async describe(_scope: string, skillId: string): Promise<string> {
    const skill = entryOf(this.#registry, skillId)
    if (!skill) throw new Error(`Skill not found: ${skillId}`)
    return skill.instructions
  }
}

/** `ctx.tools` of a bridged tool whose context has none: every nested call is refused. */
const NO_NESTED_TOOLS: NestedTools = Object.freeze({
  call: () => Promise.reject(new Error('nested tool calls are not available to this tool: its call came without a turn runtime')),
})

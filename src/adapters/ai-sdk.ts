import type { Tool, ToolSet } from 'ai'
import type { DeferredContext } from '../seams/calls.js'
import type { ContentBlock } from '../seams/journal.js'
import type { ToolCall, ToolCallOutcome } from '../seams/calls.js'
import type { Turn } from '../runtime/turns/turn.js'
import type { JsonSchema } from '../seams/types.js'
import { blockText, contextText } from './placement.js'

/** The AI SDK's schema marker (`jsonSchema()` in `ai`), set here so no SDK is loaded. */
const SCHEMA = Symbol.for('vercel.ai.schema')

/**
 * Thrown by a tool's `execute` when the call did not complete (denied, failed, timed out,
 * cancelled): the AI SDK turns it into a `tool-error` part and shows the model its message, which
 * is the pipeline's text for the model. The outcome rides along for the host.
 */
export class ToolOutcomeError extends Error {
  readonly outcome: ToolCallOutcome

  constructor(outcome: ToolCallOutcome) {
    const contexts = (outcome.contexts ?? []).map(contextText)
    super([outcome.content.map(blockText).join('\n') || `(${outcome.status}: ${outcome.code})`, ...contexts].join('\n'))
    this.name = 'ToolOutcomeError'
    this.outcome = outcome
  }
}

/**
 * The turn's tools as a Vercel AI SDK `ToolSet` for `generateText` / `streamText`. Each `execute`
 * runs the call through `turn.tools` (arguments, approvals, guards, journal); the calls the SDK
 * starts together for one model step run as one `executeBatch`, so concurrency and model order
 * hold as everywhere else. A completed call's output is its `ToolCallOutcome` and the model reads
 * its content (text and images) and then the contexts it deferred; any other outcome is thrown as
 * a `ToolOutcomeError` (a `tool-error` part).
 */
export function aiSdkTools(turn: Turn): ToolSet {
  const batcher = new CallBatcher(turn)
  const tools: ToolSet = {}
  for (const capability of turn.capabilities.tools) {
    const { $schema: _, ...parameters } = capability.parameters
    const tool: Tool<unknown, ToolCallOutcome> = {
      type: 'function',
      description: capability.description,
      inputSchema: jsonSchema(parameters),
      async execute(input, { toolCallId, abortSignal }) {
        const args = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {}
        const outcome = await batcher.run({ callId: toolCallId, name: capability.name, arguments: args }, abortSignal)
        if (outcome.status !== 'completed') throw new ToolOutcomeError(outcome)
        return outcome
      },
      toModelOutput: ({ output }) => modelOutput(output),
    }
    tools[capability.name] = tool
  }
  return tools
}

/**
 * What the AI SDK's `jsonSchema()` makes, built here so no SDK is loaded. No `validate`: the
 * pipeline checks the arguments (an invalid call becomes an `INVALID_ARGS` result the model can
 * correct, not an SDK error).
 */
function jsonSchema(schema: JsonSchema): Tool<unknown, ToolCallOutcome>['inputSchema'] {
  return { [SCHEMA]: true, _type: undefined, jsonSchema: schema, validate: undefined } as unknown as Tool<unknown, ToolCallOutcome>['inputSchema']
}

/** The SDK's `content` tool output (what `toModelOutput` returns). */
type ContentOutput = Extract<Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>, { type: 'content' }>

function modelOutput(outcome: ToolCallOutcome): ContentOutput {
  const value: ContentOutput['value'] = outcome.content.map((block: ContentBlock) =>
    block.type === 'image' ? { type: 'image-data', data: block.data, mediaType: block.mimeType } : { type: 'text', text: blockText(block) },
  )
  for (const context of outcome.contexts ?? ([] as DeferredContext[])) value.push({ type: 'text', text: contextText(context) })
  if (value.length === 0) value.push({ type: 'text', text: '(no output)' })
  return { type: 'content', value }
}

/** Collects the calls that arrive in one turn of the event loop and runs them as one batch. */
class CallBatcher {
  readonly #turn: Turn
  #pending: { call: ToolCall; signal?: AbortSignal; resolve: (outcome: ToolCallOutcome) => void; reject: (error: unknown) => void }[] = []

  constructor(turn: Turn) {
    this.#turn = turn
  }

  run(call: ToolCall, signal: AbortSignal | undefined): Promise<ToolCallOutcome> {
    return new Promise((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush())
      this.#pending.push({ call, signal, resolve, reject })
    })
  }

  #flush(): void {
    const pending = this.#pending
    this.#pending = []
    // The SDK passes one abort signal to every call of a step.
    const signal = pending.find((entry) => entry.signal)?.signal
    this.#turn.tools.executeBatch(pending.map((entry) => entry.call), signal ? { signal } : {}).then(
      (outcomes) => {
        for (const [i, outcome] of outcomes.entries()) pending[i]!.resolve(outcome)
      },
      (error: unknown) => {
        for (const entry of pending) entry.reject(error)
      },
    )
  }
}

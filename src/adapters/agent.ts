import type { ProgressEvent, ToolCall, ToolCallOutcome } from '../seams/calls.js'
import type { Turn } from '../runtime/turns/turn.js'
import type { ApprovalEvent, ObservedApprovals } from './agent-approvals.js'
import type { AgentMessage } from './messages.js'
import type { ModelClient, ModelDelta } from './model-client.js'
import { skillInstructions } from './placement.js'

export interface RunAgentOptions {
  /** The turn whose tools the model may call; `runAgent` does not end it. */
  readonly turn: Turn
  readonly model: ModelClient
  /** The conversation so far (a `transcript`, earlier messages, the new user message). */
  readonly messages: readonly AgentMessage[]
  /** Model requests at most (default 16); the loop stops after this many even if calls remain. */
  readonly maxSteps?: number
  readonly signal?: AbortSignal
  /** The turn's approval port wrapped by `observeApprovals`, to report its questions as events. */
  readonly approvals?: ObservedApprovals
  /** Add `skillInstructions(turn.capabilities)` as a leading system message (default true). */
  readonly instructions?: boolean
}

/** What a run reports while it goes, in order. */
export type AgentEvent =
  | { readonly type: 'model-step'; readonly step: number }
  /** A piece of the answer's text, as a streaming model sends it (before its `assistant` event). */
  | { readonly type: 'text-delta'; readonly step: number; readonly text: string }
  /** A piece of the `index`th tool call: its id and name once, its arguments in pieces. */
  | {
      readonly type: 'tool-call-delta'
      readonly step: number
      readonly index: number
      readonly callId?: string
      readonly name?: string
      readonly arguments: string
    }
  | { readonly type: 'assistant'; readonly step: number; readonly text: string; readonly toolCalls: readonly ToolCall[] }
  | { readonly type: 'tool-started'; readonly step: number; readonly call: ToolCall }
  /** A running call reported progress (throttled as `root.on('progress')` is). */
  | { readonly type: 'tool-progress'; readonly step: number; readonly progress: ProgressEvent }
  | { readonly type: 'tool-settled'; readonly step: number; readonly outcome: ToolCallOutcome }
  | ApprovalEvent

export interface AgentResult {
  /** `final`: the model answered without calls; `max-steps`; `aborted`: the signal fired. */
  readonly reason: 'final' | 'max-steps' | 'aborted'
  /** The last assistant text (the answer, when `reason` is `final`). */
  readonly text: string
  /** The input messages plus every assistant and tool message of this run, in order. */
  readonly messages: readonly AgentMessage[]
  readonly steps: number
}

/** A run in progress: iterate it for its events; `result` settles when it stops. */
export interface AgentRun extends AsyncIterable<AgentEvent> {
  readonly result: Promise<AgentResult>
}

/**
 * The reference agent loop: model → tool calls → `executeBatch` (model order, concurrency,
 * approvals, journal) → tool results → model, until the model answers without calls, `maxSteps`
 * model requests, or `signal` aborts. An abort during a batch lets it settle (every call still gets
 * its result, so the messages stay valid); an abort during a model request stops at once. A model
 * error rejects `result` and ends the iteration with that error.
 */
export function runAgent(options: RunAgentOptions): AgentRun {
  const queue: AgentEvent[] = []
  let wake: (() => void) | undefined
  let finished = false
  let failure: unknown
  const emit = (event: AgentEvent) => {
    queue.push(event)
    wake?.()
  }
  const unsubscribe = options.approvals?.subscribe(emit)
  const result = loop(options, emit).then(
    (value) => {
      finished = true
      unsubscribe?.()
      wake?.()
      return value
    },
    (error: unknown) => {
      finished = true
      failure = error
      unsubscribe?.()
      wake?.()
      throw error
    },
  )
  // A caller that only iterates still sees the failure, so `result` must not count as unhandled.
  result.catch(() => {})
  return {
    result,
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const event = queue.shift()
        if (event) {
          yield event
          continue
        }
        if (finished) {
          if (failure !== undefined) throw failure
          return
        }
        await new Promise<void>((resolve) => {
          wake = resolve
        })
        wake = undefined
      }
    },
  }
}

async function loop(options: RunAgentOptions, emit: (event: AgentEvent) => void): Promise<AgentResult> {
  const { turn, model } = options
  const signal = options.signal ?? new AbortController().signal
  const maxSteps = options.maxSteps ?? 16
  const messages: AgentMessage[] = [...options.messages]
  const instructions = options.instructions === false ? undefined : skillInstructions(turn.capabilities)
  let text = ''
  for (let step = 1; step <= maxSteps; step++) {
    if (signal.aborted) return { reason: 'aborted', text, messages, steps: step - 1 }
    emit({ type: 'model-step', step })
    let reply: Awaited<ReturnType<ModelClient['complete']>>
    try {
      const request = instructions ? [{ role: 'system' as const, content: instructions }, ...messages] : messages
      const onDelta = (delta: ModelDelta) => {
        if (delta.type === 'text') emit({ type: 'text-delta', step, text: delta.text })
        else emit({ ...delta, type: 'tool-call-delta', step })
      }
      reply = await model.complete({ messages: request, tools: turn.capabilities.tools, signal, onDelta })
    } catch (error) {
      if (signal.aborted) return { reason: 'aborted', text, messages, steps: step }
      throw error
    }
    text = reply.text
    const toolCalls = [...reply.toolCalls]
    messages.push(toolCalls.length > 0 ? { role: 'assistant', content: reply.text, toolCalls } : { role: 'assistant', content: reply.text })
    emit({ type: 'assistant', step, text: reply.text, toolCalls })
    if (toolCalls.length === 0) return { reason: 'final', text, messages, steps: step }
    for (const call of toolCalls) emit({ type: 'tool-started', step, call })
    const onProgress = (progress: ProgressEvent) => emit({ type: 'tool-progress', step, progress })
    const outcomes = await turn.tools.executeBatch(toolCalls, { signal, onProgress })
    for (const outcome of outcomes) {
      messages.push({ role: 'tool', result: outcome })
      emit({ type: 'tool-settled', step, outcome })
    }
  }
  return { reason: signal.aborted ? 'aborted' : 'max-steps', text, messages, steps: maxSteps }
}

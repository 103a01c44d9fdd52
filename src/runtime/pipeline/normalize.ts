import { messageOf } from '../../errors.js'
import type { DeferredContext } from '../../features/define-tool.js'
import { deepFreeze } from '../../features/schema.js'
import type { ContentBlock } from '../journal/types.js'
import { findLossy } from '../lossless.js'
import { describeIssues, validators } from '../validation.js'
import { type CallState, settle, text } from './state.js'
import type { ToolCallOutcome } from './types.js'

/**
 * Stage 9: the value must be lossless JSON and match the tool's `output`; content is rendered
 * (or taken from a post-execute replacement); `finalizeContent` runs exactly once for every
 * outcome, content only. Produces the frozen outcome.
 */
export function normalize(state: CallState): void {
  const definition = state.binding?.kind === 'feature' ? state.binding.slot.definition : undefined
  if (!state.settled && state.hasValue) checkValue(state)
  let content: ContentBlock[]
  // Content built here from fresh objects needs neither validation nor a defensive copy.
  let owned = false
  if (state.content) {
    content = state.content
  } else if (state.settled) {
    content = text(state.settled.message)
    owned = true
  } else {
    content = renderValue(state)
    owned = !definition?.render || state.settled !== undefined
  }
  // Content from a render or a post-execute replacement is checked whatever the call's status:
  // a hook may replace the content of a failed call too.
  if (!owned) {
    const problem = invalidContent(content)
    if (problem) {
      settle(state, { status: 'failed', code: 'INVALID_OUTPUT', message: `The tool "${state.call.name}" produced invalid content: ${problem}` })
      content = text(state.settled!.message)
      owned = true
    }
  }
  let details: Record<string, unknown> | undefined = state.settled?.details
  if (definition?.finalizeContent) {
    const settled = state.settled
    try {
      const finalized = definition.finalizeContent(content, {
        callId: state.call.callId,
        name: state.call.name,
        status: settled?.status ?? 'completed',
        code: settled?.code,
      })
      if (invalidContent(finalized)) throw new Error('finalizeContent returned invalid content')
      content = finalized
      owned = false
    } catch (error) {
      details = { ...details, finalizeError: messageOf(error) }
    }
  }
  const settled = state.settled
  const contexts = collectContexts(state)
  const outcome: ToolCallOutcome = {
    callId: state.call.callId,
    name: state.call.name,
    generation: state.ctx.generation.number,
    status: settled?.status ?? 'completed',
    code: settled?.code,
    policy: settled?.policy,
    reason: settled?.reason,
    value: settled ? undefined : state.value,
    content: owned ? freezeBlocks(content) : deepFreeze(content.map((block) => ({ ...block }))),
    contexts: contexts ? Object.freeze(contexts) : undefined,
    details: details ? deepFreeze({ ...details }) : undefined,
    durationMs: Math.round((performance.now() - state.startedAt) * 1000) / 1000,
  }
  state.outcome = Object.freeze(outcome)
}

function freezeBlocks(content: ContentBlock[]): readonly ContentBlock[] {
  for (const block of content) Object.freeze(block)
  return Object.freeze(content)
}

function checkValue(state: CallState): void {
  try {
    checkLossless(state)
  } catch (error) {
    // A getter or proxy that throws while the value is read: the value is not plain JSON.
    settle(state, {
      status: 'failed',
      code: 'INVALID_OUTPUT',
      message: `The tool "${state.call.name}" returned a value that could not be read as JSON: ${messageOf(error)}.`,
    })
  }
}

function checkLossless(state: CallState): void {
  const lossy = findLossy(state.value)
  if (lossy) {
    settle(state, {
      status: 'failed',
      code: 'INVALID_OUTPUT',
      message: `The tool "${state.call.name}" returned a value that is not lossless JSON at ${lossy.path}: ${lossy.problem}.`,
      details: { path: lossy.path },
    })
    return
  }
  const output = state.binding?.kind === 'feature' ? state.binding.slot.definition.output : undefined
  if (output !== undefined) {
    const result = validators.forSchema(output)(state.value)
    if (!result.ok) {
      settle(state, {
        status: 'failed',
        code: 'INVALID_OUTPUT',
        message: `The tool "${state.call.name}" returned a value that does not match its output schema: ${describeIssues(result.issues)}.`,
        details: { fields: result.issues.map((i) => i.path) },
      })
      return
    }
    state.value = result.value
  }
  deepFreeze(state.value)
}

function renderValue(state: CallState): ContentBlock[] {
  const render = state.binding?.kind === 'feature' ? state.binding.slot.definition.render : undefined
  if (render) {
    try {
      const rendered = render(state.args as never, state.value as never)
      return typeof rendered === 'string' ? text(rendered) : rendered
    } catch (error) {
      settle(state, { status: 'failed', code: 'INVALID_OUTPUT', message: `The tool "${state.call.name}" could not render its result: ${messageOf(error)}` })
      return text(state.settled!.message)
    }
  }
  const value = state.value
  return text(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'))
}

function invalidContent(content: unknown): string | undefined {
  if (!Array.isArray(content)) return 'content must be an array of blocks'
  for (const block of content as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown }[]) {
    if (block?.type === 'text' && typeof block.text === 'string') continue
    if (block?.type === 'image' && typeof block.data === 'string' && typeof block.mimeType === 'string') continue
    return `unsupported content block ${JSON.stringify(block)?.slice(0, 80)}`
  }
  return undefined
}

/** Tool-deferred contexts precede decision contexts; a block has already dropped the former. */
function collectContexts(state: CallState): DeferredContext[] | undefined {
  const { toolContexts, decisionContexts } = state
  if (!toolContexts?.length && !decisionContexts?.length) return undefined
  return [...(toolContexts ?? []), ...(decisionContexts ?? [])]
}

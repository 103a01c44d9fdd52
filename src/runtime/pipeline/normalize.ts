import { performance } from 'node:perf_hooks'
import { messageOf } from '../../errors.js'
import type { DeferredContext } from '../../seams/calls.js'
import { deepFreeze } from '../../features/schema.js'
import { checkContent } from '../../seams/content.js'
import type { ContentBlock } from '../../seams/journal.js'
import { findLossy, freezeLossless } from '../base/lossless.js'
import { describeIssues, validators } from '../../features/validation.js'
import type { CallState } from './state.js'
import { text } from './content.js'
import { settle } from './settle.js'
import type { ToolCallOutcome } from '../../seams/calls.js'

/**
 * Stage 9: the value must be lossless JSON and match the tool's `output` (a remote tool's
 * `outputSchema`); content is a post-execute replacement, else the provider's own content, else
 * the rendered value; `finalizeContent` runs exactly once for every outcome, content only.
 * Produces the frozen outcome.
 */
export function normalize(state: CallState): void {
  const plan = state.binding?.kind === 'feature' ? state.binding.plan : undefined
  if (!state.settled && state.hasValue) checkValue(state)
  let content: ContentBlock[]
  // Content built here from fresh objects needs neither validation nor a defensive copy.
  let owned = false
  if (state.content) {
    content = state.content
  } else if (state.settled) {
    content = text(state.settled.message)
    owned = true
  } else if (state.providerContent) {
    content = state.providerContent
  } else {
    content = renderValue(state)
    owned = !plan?.render || state.settled !== undefined
  }
  // Content from a render or a post-execute replacement is checked whatever the call's status:
  // a hook may replace the content of a failed call too.
  if (!owned) {
    const checked = checkContent(content)
    if (checked.ok) {
      content = checked.content
    } else {
      settle(state, { status: 'failed', code: 'INVALID_OUTPUT', message: `The tool "${state.call.name}" produced invalid content: ${checked.problem}` })
      content = text(state.settled!.message)
    }
    owned = true
  }
  let details: Record<string, unknown> | undefined = state.settled?.details
  if (plan?.finalizeContent) {
    const settled = state.settled
    try {
      const finalized = plan.finalizeContent.call(plan.definition, content, {
        callId: state.call.callId,
        name: state.call.name,
        status: settled?.status ?? 'completed',
        code: settled?.code,
      })
      const checked = checkContent(finalized)
      if (!checked.ok) throw new Error('finalizeContent returned invalid content')
      content = checked.content
    } catch (error) {
      details = { ...details, finalizeError: messageOf(error) }
    }
  }
  const settled = state.settled
  const contexts = collectContexts(state)
  const durationMs = Math.round((performance.now() - state.startedAt) * 1000) / 1000
  // A plain completed call's outcome holds only what it has: no five fields left `undefined`.
  const outcome: ToolCallOutcome =
    settled === undefined && contexts === undefined && details === undefined
      ? { callId: state.call.callId, name: state.call.name, generation: state.ctx.generation.number, status: 'completed', value: state.value, content: freezeBlocks(content), durationMs }
      : {
          callId: state.call.callId,
          name: state.call.name,
          generation: state.ctx.generation.number,
          status: settled?.status ?? 'completed',
          code: settled?.code,
          policy: settled?.policy,
          reason: settled?.reason,
          value: settled ? undefined : state.value,
          content: freezeBlocks(content),
          contexts: contexts ? Object.freeze(contexts) : undefined,
          details: details ? deepFreeze({ ...details }) : undefined,
          durationMs,
        }
  if (state.resumeToken !== undefined) (outcome as { resumeToken?: string }).resumeToken = state.resumeToken
  if (state.replayed && settled === undefined) (outcome as { replayed?: boolean }).replayed = true
  state.outcome = Object.freeze(outcome)
}

/** Blocks built or copied here: a text block is flat, any other may hold nested objects. */
function freezeBlocks(content: ContentBlock[]): readonly ContentBlock[] {
  for (const block of content) {
    if (block.type === 'text' && block.annotations === undefined) Object.freeze(block)
    else deepFreeze(block)
  }
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
  const binding = state.binding
  const output = binding?.kind === 'feature' ? binding.plan.output : state.capability?.outputSchema
  // Without an output schema the value is the outcome's: checked and frozen in one walk.
  const lossy = output === undefined ? freezeLossless(state.value) : findLossy(state.value)
  if (lossy) {
    settle(state, {
      status: 'failed',
      code: 'INVALID_OUTPUT',
      message: `The tool "${state.call.name}" returned a value that is not lossless JSON at ${lossy.path}: ${lossy.problem}.`,
      details: { path: lossy.path },
    })
    return
  }
  if (output !== undefined) {
    // A remote tool's schema is untrusted: compiled without its patterns, as its input schema is.
    const result = validators.forSchema(output, binding?.kind === 'seam')(state.value)
    if (!result.ok) {
      settle(state, {
        status: 'failed',
        code: 'INVALID_OUTPUT',
        message: `The tool "${state.call.name}" returned a value that does not match its output schema: ${describeIssues(result.issues)}.`,
        details: { fields: result.issues.map((i) => i.path) },
      })
      return
    }
    state.value = deepFreeze(result.value)
  }
}

function renderValue(state: CallState): ContentBlock[] {
  const plan = state.binding?.kind === 'feature' ? state.binding.plan : undefined
  const render = plan?.render
  if (render) {
    try {
      const rendered = render.call(plan!.definition, state.args as never, state.value as never)
      return typeof rendered === 'string' ? text(rendered) : rendered
    } catch (error) {
      settle(state, { status: 'failed', code: 'INVALID_OUTPUT', message: `The tool "${state.call.name}" could not render its result: ${messageOf(error)}` })
      return text(state.settled!.message)
    }
  }
  const value = state.value
  return text(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'))
}

/** Tool-deferred contexts precede decision contexts; a block has already dropped the former. */
function collectContexts(state: CallState): DeferredContext[] | undefined {
  const { toolContexts, decisionContexts } = state
  if (!toolContexts?.length && !decisionContexts?.length) return undefined
  return [...(toolContexts ?? []), ...(decisionContexts ?? [])]
}

import type { DeferredContext } from '../seams/calls.js'
import type { AgentCapabilities } from '../seams/capabilities.js'
import type { ContentBlock } from '../seams/journal.js'
import { LOAD_SKILL, LOAD_SKILL_SOURCE } from '../runtime/generations/load-skill.js'
import type { ToolResult } from './messages.js'

/**
 * Where skills and deferred contexts go: one rule, applied by every adapter.
 *
 * 1. **Skills** are system instructions: `skillInstructions(capabilities)` lists every skill by
 *    name, description and the tools it names, and includes the full instructions of `always`
 *    skills (and of those named in `include`); the others the model loads with the built-in
 *    `load_skill` tool, which the line after the list points it to. It goes where each API keeps instructions: the first `system` message
 *    (Chat Completions), `instructions` (Responses), `system` (Anthropic, AI SDK).
 * 2. **Deferred contexts** follow the tool results of the batch that produced them, in model
 *    order, as text in the user turn right after those results: a `user` message after the tool
 *    messages (Chat Completions, Responses), text blocks after the `tool_result` blocks of the same
 *    user message (Anthropic). The AI SDK owns its message list between steps, so there they close
 *    the content of the call that deferred them. Each context is wrapped in
 *    `<context id="…" role="user|system">…</context>`: no API takes a system message mid-turn.
 */
export function skillInstructions(capabilities: AgentCapabilities, options: { include?: readonly string[] } = {}): string | undefined {
  if (capabilities.skills.length === 0) return undefined
  const include = new Set(options.include)
  const lines = ['Skills available in this session:']
  for (const skill of capabilities.skills) lines.push(`- ${skill.name}: ${skill.description}${skill.tools.length > 0 ? ` (tools: ${skill.tools.join(', ')})` : ''}`)
  // The built-in loader, not a plugin's own tool of that name (which may do anything).
  if (capabilities.tools.some((tool) => tool.name === LOAD_SKILL && tool.source === LOAD_SKILL_SOURCE)) {
    lines.push('', `Before you follow a skill, load its instructions with the ${LOAD_SKILL} tool (unless they are below).`)
  }
  for (const skill of capabilities.skills) {
    if (skill.always || include.has(skill.name)) lines.push('', `## Skill: ${skill.name}`, '', skill.instructions.trim())
  }
  return lines.join('\n')
}

/** The deferred contexts of one batch, in model order. */
export function contextsOf(results: readonly ToolResult[]): DeferredContext[] {
  return results.flatMap((result) => result.contexts ?? [])
}

/** One deferred context as the text the model reads. */
export function contextText(context: DeferredContext): string {
  return `<context id="${escapeAttribute(context.id)}" role="${context.role}">\n${context.content}\n</context>`
}

/** The text before an image or audio that had to leave its tool result (Chat Completions). */
export function imageIntro(result: ToolResult): string {
  return `Returned by the tool call ${result.callId} (${result.name}):`
}

/**
 * A content block as text, for a place that takes text only: a resource's text inline, a link by
 * its name and URI, and audio or binary data described rather than dropped, so the model knows.
 */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text
    case 'resource_link':
      return `[resource ${block.title ?? block.name}: ${block.uri}${block.description ? ` (${block.description})` : ''}]`
    case 'resource':
      return 'text' in block.resource ? `Resource ${block.resource.uri}:\n${block.resource.text}` : `[resource ${block.resource.uri}${mime(block.resource.mimeType)} content not shown]`
    default:
      return `[${block.type}${mime(block.mimeType)} content not shown]`
  }
}

function mime(mimeType: string | undefined): string {
  return mimeType ? ` ${mimeType}` : ''
}

/** What a result with no content says instead, so no API sees an empty tool result. */
export function emptyText(result: ToolResult): string {
  return result.status === 'completed' ? '(no output)' : `(${result.status}${result.code ? `: ${result.code}` : ''})`
}

function escapeAttribute(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;')
}

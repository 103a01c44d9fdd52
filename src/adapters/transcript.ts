import type { JournalEvent, JournalStore, TurnSummary } from '../seams/journal.js'
import type { ToolCall } from '../seams/calls.js'
import type { AgentMessage, ToolResult } from './messages.js'

/** What `transcript` reads of a journal store: `read`, and `turns` for `{ session }`. */
export type TranscriptJournal = Pick<JournalStore, 'read' | 'turns'>

/**
 * A provider-neutral history rebuilt from the journal: for each turn (oldest first for a session),
 * the tool calls as assistant messages, each followed by the results of its calls in call order.
 *
 * - Every call is paired with exactly one result. A call the journal closed with
 *   `OUTCOME_UNKNOWN` (crash repair), or one with no result at all (a crash not yet repaired), is
 *   answered with a failed result that tells the model it may or may not have run; a call parked
 *   for approval (asked, never answered) with one saying it has not run yet (`APPROVAL_PENDING`).
 *   So the next request is valid for every API.
 * - Calls journaled one after another with no result between them came from one model message and
 *   share one assistant message; any other grouping is still valid for every API.
 * - The journal keeps calls, results and approvals, not the model's or the user's text, and not
 *   deferred contexts: a host that needs the words too keeps them itself and interleaves them
 *   (`runAgent` returns its messages for that).
 */
export async function transcript(journal: TranscriptJournal, which: { session: string } | { turnId: string }): Promise<AgentMessage[]> {
  const turnIds = 'turnId' in which ? [which.turnId] : await sessionTurns(journal, which.session)
  const messages: AgentMessage[] = []
  for (const turnId of turnIds) messages.push(...turnMessages(await journal.read(turnId)))
  return messages
}

/** The result a call gets when the journal cannot say how it ended. */
export function interruptedResult(call: { callId: string; name: string }): ToolResult {
  return {
    callId: call.callId,
    name: call.name,
    status: 'failed',
    code: 'OUTCOME_UNKNOWN',
    content: [
      {
        type: 'text',
        text: `The call to "${call.name}" was interrupted before its result was recorded: it may or may not have run. Check its effect before you repeat it.`,
      },
    ],
  }
}

async function sessionTurns(journal: TranscriptJournal, session: string): Promise<string[]> {
  const turns: TurnSummary[] = []
  let before: string | undefined
  do {
    const page = await journal.turns({ session, limit: 500, before })
    turns.push(...page.turns)
    before = page.next
  } while (before !== undefined)
  // Pages come newest first (in begin order, ties included); a conversation reads oldest first.
  return turns.reverse().map((turn) => turn.turnId)
}

function turnMessages(events: readonly JournalEvent[]): AgentMessage[] {
  const results = new Map<string, ToolResult>()
  // Calls whose approval was asked and never answered: parked (or the process stopped while it
  // asked); either way the body has not run, since approval comes before it.
  const waiting = new Set<string>()
  // A nested call (a tool body's `ctx.tools.call`, a Code Mode sub-call) is not the model's: only
  // its outer call is shown. One whose approval is open keeps its outermost call waiting.
  const nested = new Map<string, string>()
  const outermost = (callId: string): string => {
    let id = callId
    for (let parent = nested.get(id); parent !== undefined; parent = nested.get(id)) id = parent
    return id
  }
  for (const event of events) {
    if (event.kind === 'tool/call' && event.parent !== undefined) nested.set(event.callId, event.parent)
  }
  for (const event of events) {
    if (nested.has((event as { callId?: string }).callId ?? '')) {
      const callId = (event as { callId: string }).callId
      if (event.kind === 'approval/asked') waiting.add(outermost(callId))
      else if (event.kind === 'approval/decided') waiting.delete(outermost(callId))
      continue
    }
    if (event.kind === 'tool/result') {
      results.set(event.callId, { callId: event.callId, name: '', status: event.status, code: event.code, policy: event.policy, content: event.content })
    } else if (event.kind === 'approval/asked') {
      waiting.add(event.callId)
    } else if (event.kind === 'approval/decided') {
      waiting.delete(event.callId)
    }
  }
  const messages: AgentMessage[] = []
  let group: ToolCall[] = []
  const flush = () => {
    if (group.length === 0) return
    messages.push({ role: 'assistant', content: '', toolCalls: group })
    for (const call of group) messages.push({ role: 'tool', result: resultFor(call, results.get(call.callId), waiting.has(call.callId)) })
    group = []
  }
  for (const event of events) {
    if ((event.kind === 'tool/call' || event.kind === 'tool/result') && nested.has(event.callId)) continue
    if (event.kind === 'tool/call') group.push({ callId: event.callId, name: event.name, arguments: event.arguments })
    else if (event.kind === 'tool/result') flush()
  }
  flush()
  return messages
}

function resultFor(call: ToolCall, result: ToolResult | undefined, waiting: boolean): ToolResult {
  if (!result && waiting) return pendingResult(call)
  if (!result || result.code === 'OUTCOME_UNKNOWN') return interruptedResult(call)
  return { ...result, name: call.name }
}

/** The result a call gets while its approval is still open: it has not run. */
function pendingResult(call: ToolCall): ToolResult {
  return {
    callId: call.callId,
    name: call.name,
    status: 'suspended',
    code: 'APPROVAL_PENDING',
    content: [{ type: 'text', text: `The call to "${call.name}" is waiting for a person's approval and has not run yet.` }],
  }
}

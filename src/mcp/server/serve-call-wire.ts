import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, type Server, type ServerContext } from '@modelcontextprotocol/server'
import { redactText, scrubValues } from '../../runtime/base/redact.js'
import type { CallLogSink, ProgressEvent, ToolCallOutcome } from '../../seams/calls.js'

/**
 * The parts of a served `tools/call` that talk to its client besides the result: the call's id,
 * its progress and log notifications, and the refusals it can answer with.
 */

/**
 * A tool that declares client capabilities (`clientCapabilities`) runs only for a client that
 * declared them (at `initialize`, or in a 2026-07-28 request's `_meta`): else the call is refused
 * with `-32021` naming the missing ones, before it is journaled.
 */
export function checkNeeds(server: Server, name: string, needs: readonly string[] | undefined): void {
  if (needs === undefined) return
  const declared = (server.getClientCapabilities() ?? {}) as Record<string, unknown>
  const missing = needs.filter((capability) => declared[capability] === undefined)
  if (missing.length === 0) return
  throw new MissingRequiredClientCapabilityError(
    { requiredCapabilities: Object.fromEntries(missing.map((capability) => [capability, {}])) },
    `The tool "${scrubValues(name)}" needs the client capabilities ${missing.join(', ')}, which this client did not declare`,
  )
}

/**
 * A call's id: this bridge's own count, for uniqueness (a client may reuse a JSON-RPC id once its
 * request is answered, and `1` and `"1"` are different ids), then the client's id, escaped and cut,
 * to find the request again. It reaches the journal and terminals, so it carries no control characters.
 */
export function callIdOf(count: number, id: string | number): string {
  const wire = typeof id === 'number' ? String(id) : JSON.stringify(String(id))
  return `mcp-${count}.${wire.length > 40 ? `${wire.slice(0, 39)}…` : wire}`
}

/**
 * The call's progress as `notifications/progress` on the request's progress token (both eras: the
 * notification relates to the request, so over HTTP it travels on the call's own stream), when
 * the client sent one. MCP wants `progress` to increase with each one: a report that does not
 * (a new message at the same count) is not sent.
 */
export function progressSender(ctx: ServerContext): ((event: ProgressEvent) => void) | undefined {
  const token = ctx.mcpReq._meta?.progressToken
  if (token === undefined) return undefined
  let last = Number.NEGATIVE_INFINITY
  return (event) => {
    if (event.done <= last) return
    last = event.done
    const params = { progressToken: token, progress: event.done, ...(event.total === undefined ? {} : { total: event.total }), ...(event.message === undefined ? {} : { message: redactText(event.message) }) }
    ctx.mcpReq.notify({ method: 'notifications/progress', params }).catch(() => {
      // The client went away: the call's own signal tells the body.
    })
  }
}

/**
 * The call's `ctx.log` lines as MCP logging notifications on its own request: at or above the level
 * the client set with `logging/setLevel` (2025-11-25), or the one its request's `_meta` carries
 * (2026-07-28, where a request without one gets none). A line the client cannot take is dropped.
 */
export function logTo(ctx: ServerContext): CallLogSink {
  return (level, message, fields) => {
    const data = fields === undefined ? message : { message, ...fields }
    ctx.mcpReq.log(level === 'warn' ? 'warning' : level, data, 'seam').catch(() => {})
  }
}

export function outcomeAttributes(outcome: ToolCallOutcome): Record<string, string> {
  return outcome.code === undefined ? { 'seam.outcome.status': outcome.status } : { 'seam.outcome.status': outcome.status, 'seam.outcome.code': outcome.code }
}

/** A client-supplied name, quoted and cut, so a log line cannot be forged with control characters. */
export function printable(name: string): string {
  const quoted = JSON.stringify(name)
  return quoted.length > 80 ? `${quoted.slice(0, 79)}…` : quoted
}

/** The refusal of an approval round's retry whose arguments are not those of the call it continues. */
export function argumentsChanged(tool: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `APPROVAL_ARGUMENTS_CHANGED: this retry of the approval round for "${tool}" carries other arguments than the parked call it continues; nothing was decided or run. Retry with the same arguments, or call the tool again without the requestState to be asked about the new ones.`,
    { code: 'APPROVAL_ARGUMENTS_CHANGED' },
  )
}


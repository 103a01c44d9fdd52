import { type Attributes, type Context, context, createTraceState, isSpanContextValid, type Span, type SpanContext, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'

/**
 * W3C trace context through MCP `_meta` (`traceparent`, `tracestate`), both ways: a request made
 * carries the caller's span, a request served continues the trace it brought. Written and read here
 * rather than through the global propagator: the `_meta` keys are W3C's whatever the host configured.
 */

/** The tracer of MCP requests made and served; without an SDK its spans are no-ops that still carry a parent. */
export const mcpTracer = trace.getTracer('seam-runtime')

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
/** A `tracestate` longer than this is dropped rather than parsed (W3C allows 32 members of 256 bytes). */
const MAX_TRACESTATE = 8_192

export type TraceMeta = { traceparent: string; tracestate?: string }

/** `_meta` entries for a request made in `ctx`, or `undefined` when `ctx` holds no valid span. */
export function traceMeta(ctx: Context): TraceMeta | undefined {
  const span = trace.getSpanContext(ctx)
  if (span === undefined || !isSpanContextValid(span)) return undefined
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0')
  const meta: TraceMeta = { traceparent: `00-${span.traceId}-${span.spanId}-${flags}` }
  const state = span.traceState?.serialize()
  if (state) meta.tracestate = state
  return meta
}

/**
 * The context a served request continues: its `_meta` trace parent when it carries a valid one,
 * else `fallback` (the context active where the request arrived). Malformed values are ignored.
 */
export function contextFromMeta(meta: unknown, fallback: Context = context.active()): Context {
  if (meta === null || typeof meta !== 'object') return fallback
  const { traceparent, tracestate } = meta as { traceparent?: unknown; tracestate?: unknown }
  if (typeof traceparent !== 'string') return fallback
  const match = TRACEPARENT.exec(traceparent)
  if (!match) return fallback
  const remote: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true }
  if (typeof tracestate === 'string' && tracestate.length <= MAX_TRACESTATE) remote.traceState = createTraceState(tracestate)
  return isSpanContextValid(remote) ? trace.setSpanContext(fallback, remote) : fallback
}

/**
 * A span for one MCP `tools/call`, made (`client`, a child of the active span) or served (`server`,
 * a child of `parent`): named `tools/call <tool>` as the MCP semantic conventions name them.
 */
export function startRequestSpan(kind: 'client' | 'server', toolName: string, parent: Context, provider?: string): Span {
  const attributes: Attributes = { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': toolName }
  if (provider !== undefined) attributes['seam.provider'] = provider
  return mcpTracer.startSpan(`tools/call ${toolName.slice(0, 128)}`, { kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.SERVER, attributes }, parent)
}

/** Ends a request span; a failure (`errorType`) sets the error status. */
export function endRequestSpan(span: Span, errorType?: string, attributes?: Attributes): void {
  if (span.isRecording()) {
    if (attributes) span.setAttributes(attributes)
    if (errorType !== undefined) {
      span.setAttribute('error.type', errorType)
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorType })
    }
  }
  span.end()
}

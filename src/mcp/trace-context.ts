import { type TraceContext, traceContextOf } from '../seams/trace.js'
import { type Attributes, type Context, context, createTraceState, isSpanContextValid, type Span, type SpanContext, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'

/**
 * W3C trace context through MCP `_meta` (`traceparent`, `tracestate`), both ways: a request made
 * carries the caller's span, a request served continues the trace it brought. Written and read here
 * rather than through the global propagator: the `_meta` keys are W3C's whatever the host configured.
 */

/** The tracer of MCP requests made and served; without an SDK its spans are no-ops that still carry a parent. */
export const mcpTracer = trace.getTracer('seam-runtime')

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

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
  const carried = traceContextOf(meta)
  const match = carried && TRACEPARENT.exec(carried.traceparent)
  if (!carried || !match) return fallback
  const remote: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true }
  if (carried.tracestate !== undefined) remote.traceState = createTraceState(carried.tracestate)
  return isSpanContextValid(remote) ? trace.setSpanContext(fallback, remote) : fallback
}

/**
 * The parent of a request made for a call: the active span where one is (an SDK's context manager
 * carries it), else the trace context the call itself came with, so a served request's trace
 * reaches a mounted server even in a process without an OpenTelemetry SDK.
 */
export function parentFor(carried: TraceContext | undefined, active: Context = context.active()): Context {
  if (carried === undefined) return active
  const span = trace.getSpanContext(active)
  return span !== undefined && isSpanContextValid(span) ? active : contextFromMeta(carried, active)
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

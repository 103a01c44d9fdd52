/**
 * W3C trace context (`traceparent`, `tracestate`) as a call carries it: from a served MCP request's
 * `_meta` to the tool body (`ctx.trace`) and a provider (`ToolInvocationContext.trace`), which
 * forwards it to a mounted server. Plain strings, so it travels without an OpenTelemetry SDK.
 */
export interface TraceContext {
  readonly traceparent: string
  readonly tracestate?: string
}

const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/
/** A `tracestate` longer than this is dropped (W3C allows 32 members of 256 bytes). */
const MAX_TRACESTATE = 8_192

/** The trace context in `meta` (a request's `_meta`), frozen, or `undefined` when it holds no valid `traceparent`. */
export function traceContextOf(meta: unknown): TraceContext | undefined {
  if (meta === null || typeof meta !== 'object') return undefined
  const { traceparent, tracestate } = meta as { traceparent?: unknown; tracestate?: unknown }
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined
  const state = typeof tracestate === 'string' && tracestate.length <= MAX_TRACESTATE ? tracestate : undefined
  return Object.freeze(state === undefined ? { traceparent } : { traceparent, tracestate: state })
}

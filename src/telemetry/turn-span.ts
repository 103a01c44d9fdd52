import { type Context, context, type Span, SpanKind, trace, type Tracer } from '@opentelemetry/api'
import type { CallProbe, TurnProbe } from '../runtime/generations/instrumentation.js'
import type { ToolCall } from '../seams/calls.js'
import { ATTR } from './attributes.js'
import { CallSpan, type CallSpanSettings } from './call-span.js'
import { spanName } from './payloads.js'

/** Tool names from a model are untrusted: a span name keeps at most this many characters of one. */
const MAX_NAME_CHARS = 128

/**
 * A turn's span, parent of its calls' `execute_tool` spans. A call made while another span is
 * active than the one the turn began under (an MCP request served, a host's model-step span) is
 * that span's child instead, so a trace that arrived with the request stays one trace.
 */
export class TurnSpan implements TurnProbe {
  readonly #span: Span
  readonly #context: Context
  readonly #outer: Span | undefined
  readonly #tracer: Tracer
  readonly #settings: CallSpanSettings
  /** Absent without a meter, so the runtime does not time its journal appends for nothing. */
  readonly appended: TurnProbe['appended']

  constructor(tracer: Tracer, span: Span, parent: Context, settings: CallSpanSettings) {
    this.#tracer = tracer
    this.#span = span
    this.#outer = trace.getSpan(parent)
    this.#context = trace.setSpan(parent, span)
    this.#settings = settings
    const { appendDuration } = settings.metrics
    this.appended = settings.metered
      ? (kind, durationMs, failed) => {
          appendDuration.record(durationMs / 1000, failed ? { [ATTR.journalEvent]: kind, [ATTR.errorType]: 'append_failed' } : { [ATTR.journalEvent]: kind })
        }
      : undefined
  }

  call(call: ToolCall): CallProbe {
    const active = context.active()
    const activeSpan = trace.getSpan(active)
    const parent = activeSpan !== undefined && activeSpan !== this.#outer && activeSpan !== this.#span ? active : this.#context
    return this.callUnder(call, parent)
  }

  /** A call's span under `parent`: the turn's context, or a nested call's outer call's span. */
  callUnder(call: ToolCall, parent: Context): CallSpan {
    const name = spanName(call.name, MAX_NAME_CHARS)
    const span = this.#tracer.startSpan(
      `execute_tool ${name}`,
      { kind: SpanKind.INTERNAL, attributes: { [ATTR.operation]: 'execute_tool', [ATTR.toolName]: name, [ATTR.toolCallId]: call.callId } },
      parent,
    )
    return new CallSpan(span, name, parent, this.#settings, this)
  }

  ended(reason: 'ended' | 'interrupted'): void {
    this.#span.setAttribute('seam.turn.end', reason)
    this.#span.end()
  }
}

import { type Attributes, type Context, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api'
import type { ApprovalDecision } from '../seams/journal.js'
import type { ProgressEvent } from '../seams/calls.js'
import { redactText } from '../runtime/base/redact.js'
import type { CallProbe, SettledCall } from '../runtime/generations/instrumentation.js'
import type { ToolCall } from '../seams/calls.js'
import { ATTR, EVENT, MAX_REASON_BYTES } from './attributes.js'
import type { SeamMetrics } from './metrics.js'
import { bounded, recordedArguments, recordedResult } from './payloads.js'

/** What the spans of one `openTelemetry()` share. */
export interface CallSpanSettings {
  readonly metrics: SeamMetrics
  /** False with the API's no-op meter: journal appends are then not timed at all. */
  readonly metered: boolean
  readonly host: string
  readonly recordArguments: boolean
  readonly recordResults: boolean
  readonly maxPayloadBytes: number
}

/**
 * One call's `execute_tool` span and its metrics. Stage events become span events; the outcome
 * sets the status attributes, and a `failed` outcome the span's error status. Metrics are recorded
 * whether or not the span is sampled.
 */
export class CallSpan implements CallProbe {
  readonly #span: Span
  readonly #name: string
  readonly #settings: CallSpanSettings
  readonly #recording: boolean
  readonly #parent: Context
  readonly #turn: { callUnder(call: ToolCall, parent: Context): CallSpan }

  constructor(span: Span, name: string, parent: Context, settings: CallSpanSettings, turn: { callUnder(call: ToolCall, parent: Context): CallSpan }) {
    this.#turn = turn
    this.#span = span
    this.#parent = parent
    this.#name = name
    this.#settings = settings
    this.#recording = span.isRecording()
    settings.metrics.activeCalls.add(1)
  }

  within<A extends unknown[], R>(body: (...args: A) => R, self: unknown, ...args: A): R {
    return context.with(trace.setSpan(this.#parent, this.#span), body, self, ...args)
  }

  /** A nested call's span: a child of this call's. */
  child(call: ToolCall): CallProbe {
    return this.#turn.callUnder(call, trace.setSpan(this.#parent, this.#span))
  }

  approvalAsked(reason: string): void {
    if (this.#recording) this.#span.addEvent(EVENT.approvalAsked, { [ATTR.reason]: bounded(reason, MAX_REASON_BYTES) })
  }

  approvalDecided(decision: ApprovalDecision | 'deferred', waitMs: number): void {
    this.#settings.metrics.approvalWait.record(waitMs / 1000, { [ATTR.toolName]: this.#name, [ATTR.decision]: decision })
    if (this.#recording) this.#span.addEvent(EVENT.approvalDecided, { [ATTR.decision]: decision, [ATTR.waitMs]: waitMs })
  }

  guardDenied(reason: string): void {
    if (this.#recording) this.#span.addEvent(EVENT.guardDenied, { [ATTR.reason]: bounded(reason, MAX_REASON_BYTES) })
  }

  /** One span event per report observers heard (already throttled); the message redacted as the journal is. */
  progress(event: ProgressEvent): void {
    if (!this.#recording) return
    const attributes: Attributes = { [ATTR.progressDone]: event.done }
    if (event.total !== undefined) attributes[ATTR.progressTotal] = event.total
    if (event.message !== undefined) attributes[ATTR.progressMessage] = bounded(redactText(event.message), MAX_REASON_BYTES)
    this.#span.addEvent(EVENT.progress, attributes)
  }

  timedOut(timeoutMs: number): void {
    if (this.#recording) this.#span.addEvent(EVENT.timeout, { [ATTR.timeoutMs]: timeoutMs })
  }

  abandoned(): void {
    const { metrics } = this.#settings
    metrics.abandoned.add(1, { [ATTR.toolName]: this.#name })
    metrics.abandonedActive.add(1)
    if (this.#recording) this.#span.addEvent(EVENT.abandoned)
  }

  returnedLate(): void {
    this.#settings.metrics.abandonedActive.add(-1)
  }

  settled({ outcome, capability, arguments: raw }: SettledCall): void {
    const { metrics } = this.#settings
    metrics.activeCalls.add(-1)
    const status = outcome.status
    metrics.callDuration.record(outcome.durationMs / 1000, { [ATTR.toolName]: this.#name, [ATTR.status]: status })
    metrics.outcomes.add(1, { [ATTR.toolName]: this.#name, [ATTR.status]: status, [ATTR.code]: outcome.code ?? 'OK' })
    const span = this.#span
    if (!this.#recording) {
      span.end()
      return
    }
    const attributes: Attributes = {
      [ATTR.generation]: outcome.generation,
      [ATTR.status]: status,
      [ATTR.host]: this.#settings.host,
      [ATTR.durationMs]: outcome.durationMs,
    }
    if (outcome.code !== undefined) attributes[ATTR.code] = outcome.code
    if (outcome.policy !== undefined) attributes[ATTR.policy] = outcome.policy
    if (capability) {
      attributes[ATTR.source] = capability.source
      attributes[ATTR.toolType] = capability.kind === 'seam' ? 'extension' : 'function'
    }
    const { maxPayloadBytes } = this.#settings
    if (this.#settings.recordArguments) {
      const recorded = recordedArguments(raw, maxPayloadBytes)
      if (recorded !== undefined) attributes[ATTR.toolArguments] = recorded
    }
    if (this.#settings.recordResults) attributes[ATTR.toolResult] = recordedResult(outcome, maxPayloadBytes)
    span.setAttributes(attributes)
    if (status === 'failed') {
      span.setAttribute(ATTR.errorType, outcome.code ?? 'TOOL_ERROR')
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code })
    }
    span.end()
  }
}

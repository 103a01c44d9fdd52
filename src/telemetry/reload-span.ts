import { performance } from 'node:perf_hooks'
import { type Context, type Span, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import type { ReloadPhase, ReloadProbe } from '../runtime/generations/instrumentation.js'
import { redactText } from '../runtime/base/redact.js'
import type { ReloadResult } from '../runtime/generations/instrumentation.js'
import { ATTR } from './attributes.js'
import type { SeamMetrics } from './metrics.js'

/** `performance.now()` as epoch milliseconds, the time input spans take. */
function epoch(monotonic: number): number {
  return performance.timeOrigin + monotonic
}

/**
 * A reload's span (`seam.reload`) with one child span per phase: `setup`, then `bundle` and
 * `evaluate` per file loaded again, `project`, `publish`. Phases are reported once they have run,
 * so their spans are made with the times the runtime measured.
 */
export class ReloadSpan implements ReloadProbe {
  readonly #tracer: Tracer
  readonly #span: Span
  readonly #context: Context
  readonly #metrics: SeamMetrics
  readonly #started = performance.now()

  constructor(tracer: Tracer, span: Span, parent: Context, metrics: SeamMetrics) {
    this.#tracer = tracer
    this.#span = span
    this.#context = trace.setSpan(parent, span)
    this.#metrics = metrics
  }

  phase(name: ReloadPhase, startedAt: number, endedAt: number, file?: string): void {
    if (!this.#span.isRecording()) return
    const attributes = file === undefined ? undefined : { [ATTR.file]: file }
    this.#tracer.startSpan(`seam.reload.${name}`, { startTime: epoch(startedAt), attributes }, this.#context).end(epoch(endedAt))
  }

  ended(result: ReloadResult): void {
    this.#metrics.reloadDuration.record((performance.now() - this.#started) / 1000, { [ATTR.reloadOk]: result.ok })
    const span = this.#span
    if (result.ok) {
      this.#metrics.generation.record(result.generation)
      span.setAttributes({ [ATTR.reloadOk]: true, [ATTR.generation]: result.generation })
    } else {
      span.setAttributes({ [ATTR.reloadOk]: false, [ATTR.errorType]: result.error.code })
      span.setStatus({ code: SpanStatusCode.ERROR, message: redactText(result.error.message) })
    }
    span.end()
  }
}

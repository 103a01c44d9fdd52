import type { Attributes } from '@opentelemetry/api'
import { AggregationTemporality, type DataPoint, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { onTestFinished } from 'vitest'

/** A reader that exports nothing by itself: the test collects when it wants the numbers. */
export class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/**
 * An in-memory OpenTelemetry SDK, not registered globally: spans go to an in-memory exporter, and
 * `points(name)` collects a metric's data points. Shut down when the test finishes.
 */
export function memorySdk() {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new CollectingReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  onTestFinished(async () => {
    await tracerProvider.shutdown()
    await meterProvider.shutdown()
  })
  return {
    tracerProvider,
    meterProvider,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    span(name: string): ReadableSpan {
      const found = exporter.getFinishedSpans().filter((s) => s.name === name)
      if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length}: ${exporter.getFinishedSpans().map((s) => s.name).join(', ')}`)
      return found[0]!
    },
    /** The data points of one metric, after a collection. */
    points: <T = number | Histogram>(name: string) => pointsOf<T>(reader, name),
  }
}

/** Collects `reader` and returns the data points of the metric `name`. */
export async function pointsOf<T = number | Histogram>(reader: MetricReader, name: string): Promise<{ attributes: Attributes; value: T }[]> {
  const { resourceMetrics } = await reader.collect()
  for (const scope of resourceMetrics.scopeMetrics) {
    const metric = scope.metrics.find((m) => m.descriptor.name === name)
    if (metric) return (metric.dataPoints as DataPoint<T>[]).map((p) => ({ attributes: p.attributes, value: p.value }))
  }
  return []
}

/** The parent span id of a finished span. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId
}

/** All attribute values of every span and span event, as one string: for "this text appears nowhere". */
export function everything(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events.map((e) => [e.name, e.attributes]) })))
}

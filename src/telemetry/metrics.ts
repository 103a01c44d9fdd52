import type { Counter, Gauge, Histogram, Meter, UpDownCounter } from '@opentelemetry/api'

/** The runtime's instruments, created once per `openTelemetry()`. Durations in seconds, as the conventions ask. */
export interface SeamMetrics {
  readonly callDuration: Histogram
  readonly outcomes: Counter
  readonly approvalWait: Histogram
  readonly activeCalls: UpDownCounter
  readonly abandoned: Counter
  readonly abandonedActive: UpDownCounter
  readonly reloadDuration: Histogram
  readonly generation: Gauge
  readonly appendDuration: Histogram
  readonly commitSize: Histogram
}

/** Buckets for work measured in seconds, from 0.1 ms to 5 minutes (approvals wait for people). */
const SECONDS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

export function createMetrics(meter: Meter): SeamMetrics {
  const seconds = (name: string, description: string) => meter.createHistogram(name, { description, unit: 's', advice: { explicitBucketBoundaries: SECONDS } })
  return {
    callDuration: seconds('seam.tool.call.duration', 'Duration of tool calls through the pipeline, by tool and outcome status.'),
    outcomes: meter.createCounter('seam.tool.call.outcomes', { description: 'Settled tool calls, by tool, status and outcome code.', unit: '{call}' }),
    approvalWait: seconds('seam.approval.wait.duration', 'Time from an approval question to its answer, by decision.'),
    activeCalls: meter.createUpDownCounter('seam.tool.calls.active', { description: 'Tool calls accepted and not yet settled.', unit: '{call}' }),
    abandoned: meter.createCounter('seam.tool.abandoned', { description: 'Tool bodies that outlived their deadline and grace period.', unit: '{call}' }),
    abandonedActive: meter.createUpDownCounter('seam.tool.abandoned.active', { description: 'Abandoned tool bodies still running.', unit: '{call}' }),
    reloadDuration: seconds('seam.reload.duration', 'Duration of reloads (build, then publish or roll back).'),
    generation: meter.createGauge('seam.generation', { description: 'The number of the live generation.', unit: '{generation}' }),
    appendDuration: seconds('seam.journal.append.duration', 'Latency of journal appends made by tool calls, by event kind.'),
    commitSize: meter.createHistogram('seam.journal.commit.size', {
      description: 'Events written by one group commit of the journal.',
      unit: '{event}',
      advice: { explicitBucketBoundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256] },
    }),
  }
}

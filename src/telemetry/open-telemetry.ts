import { context, createNoopMeter, type Meter, metrics, ProxyTracerProvider, SpanKind, type TracerProvider, trace } from '@opentelemetry/api'
import { SeamError } from '../errors.js'
import type { Instrumentation, TelemetryOptions } from '../runtime/generations/instrumentation.js'
import { defaultHostId } from '../runtime/journal/hosts.js'
import { DEFAULT_MAX_PAYLOAD_BYTES, MIN_MAX_PAYLOAD_BYTES } from '../runtime/base/privacy.js'
import type { TurnEnvelope } from '../seams/types.js'
import { ATTR, SCOPE } from './attributes.js'
import type { CallSpanSettings } from './call-span.js'
import { createMetrics } from './metrics.js'
import { ReloadSpan } from './reload-span.js'
import { TurnSpan } from './turn-span.js'

/**
 * OpenTelemetry spans and metrics for a root: `createRoot({ telemetry: openTelemetry() })`. Uses
 * only `@opentelemetry/api`: the host brings the SDK and its exporters; without one every span is a
 * no-op. A turn is a `seam.turn` span; each call an `execute_tool <name>` span following the GenAI
 * conventions; each reload a `seam.reload` span with its phases. Arguments and results are not
 * recorded unless asked for.
 */
export function openTelemetry(options: TelemetryOptions = {}): Instrumentation {
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
  if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes < MIN_MAX_PAYLOAD_BYTES) {
    throw new SeamError('INVALID_OPTIONS', `telemetry maxPayloadBytes must be an integer of at least ${MIN_MAX_PAYLOAD_BYTES}, got ${String(options.maxPayloadBytes)}`)
  }
  const tracerProvider = () => options.tracerProvider ?? trace.getTracerProvider()
  const tracer = tracerProvider().getTracer(SCOPE)
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE)
  const metered = !isNoop(meter)
  const settings: CallSpanSettings = {
    metrics: createMetrics(meter),
    metered,
    host: options.host ?? defaultHostId(),
    recordArguments: options.recordArguments === true,
    recordResults: options.recordResults === true,
    maxPayloadBytes,
  }
  return {
    turn(turn: TurnEnvelope, generation: number) {
      // With neither an SDK's tracer nor its meter there is nothing to record: the turn's calls then
      // cost what they cost without telemetry. Checked per turn: an SDK may register later.
      if (!metered && !isLive(tracerProvider())) return undefined
      const parent = context.active()
      const span = tracer.startSpan(
        'seam.turn',
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [ATTR.turnId]: turn.turnId,
            [ATTR.conversation]: turn.session,
            [ATTR.owner]: turn.owner,
            [ATTR.generation]: generation,
            [ATTR.host]: settings.host,
          },
        },
        parent,
      )
      return new TurnSpan(tracer, span, parent, settings)
    },
    reload() {
      const parent = context.active()
      return new ReloadSpan(tracer, tracer.startSpan('seam.reload', { kind: SpanKind.INTERNAL }, parent), parent, settings.metrics)
    },
    committed(events: number) {
      settings.metrics.commitSize.record(events)
    },
  }
}

/** The provider the API hands out while no SDK registered one. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate()
const NOOP_METER = createNoopMeter()

/** Whether spans from `provider` can be recorded (a provider of another API copy counts as live). */
function isLive(provider: TracerProvider): boolean {
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_TRACER_PROVIDER
}

function isNoop(meter: Meter): boolean {
  return meter === NOOP_METER || meter.constructor === NOOP_METER.constructor
}

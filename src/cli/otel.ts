import { metrics } from '@opentelemetry/api'
import { messageOf } from '../errors.js'
import type { Instrumentation } from '../runtime/generations/instrumentation.js'
import { openTelemetry } from '../telemetry/open-telemetry.js'
import { CliError } from './errors.js'

/**
 * The SDK and OTLP exporters behind `seam dev --otel`. They are optional dependencies of the package,
 * installed with it by default and loaded only here: the library itself needs only
 * `@opentelemetry/api`, and a host embedding it brings its own SDK.
 */
const PACKAGES = [
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/exporter-metrics-otlp-http',
  '@opentelemetry/resources',
] as const

/** The OTLP/HTTP default when no endpoint variable is set. */
const DEFAULT_ENDPOINT = 'http://localhost:4318'
const DEFAULT_METRIC_INTERVAL_MS = 60_000
/** Exporting what is left at exit waits at most this long: a collector that is down must not hold `Ctrl-C`. */
const SHUTDOWN_MS = 3_000

export interface OtelSetup {
  readonly telemetry: Instrumentation
  /** Where traces go, for the banner. */
  readonly endpoint: string
  /** Exports what is buffered and stops the SDK (bounded). */
  shutdown(): Promise<void>
}

/** Whether `seam dev` should export: `--otel`, or an OTLP endpoint in the environment, unless `OTEL_SDK_DISABLED=true`. */
export function otelWanted(flag: boolean, env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  return flag || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim())
}

/**
 * Starts a tracer provider (registered globally, with async context and W3C propagation) and a meter
 * provider, each exporting over OTLP/HTTP as the standard variables say (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_METRIC_EXPORT_INTERVAL`; the exporters read them themselves).
 */
export async function startOtel(env: NodeJS.ProcessEnv): Promise<OtelSetup> {
  const [traceNode, sdkMetrics, traceExporter, metricExporter, resources] = await loadSdk()
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'seam-dev' }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
  const tracerProvider = new traceNode.NodeTracerProvider({
    resource,
    spanProcessors: [new traceNode.BatchSpanProcessor(new traceExporter.OTLPTraceExporter())],
  })
  tracerProvider.register()
  const meterProvider = new sdkMetrics.MeterProvider({
    resource,
    readers: [
      new sdkMetrics.PeriodicExportingMetricReader({
        exporter: new metricExporter.OTLPMetricExporter(),
        exportIntervalMillis: metricInterval(env.OTEL_METRIC_EXPORT_INTERVAL),
      }),
    ],
  })
  metrics.setGlobalMeterProvider(meterProvider)
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || DEFAULT_ENDPOINT
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || `${base.replace(/\/+$/, '')}/v1/traces`
  return {
    telemetry: openTelemetry({ tracerProvider, meterProvider }),
    endpoint,
    async shutdown() {
      const done = Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()])
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, SHUTDOWN_MS).unref())])
    },
  }
}

function loadSdk() {
  return Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/resources'),
  ]).catch((error: unknown) => {
    throw new CliError(
      `--otel needs the OpenTelemetry SDK, which is not installed (${messageOf(error)})`,
      `they are optional dependencies of seam-runtime: npm install ${PACKAGES.join(' ')}`,
    )
  })
}

function metricInterval(value: string | undefined): number {
  const parsed = Number(value)
  return value !== undefined && /^\d+$/.test(value.trim()) && parsed > 0 ? parsed : DEFAULT_METRIC_INTERVAL_MS
}

/**
 * Issue 18: what telemetry costs a call through the pipeline (`turn.tools.execute`, memory journal,
 * a zod tool, no hooks), each row against the same pipeline with no `telemetry` option (the
 * instrumentation seam's no-op default) measured in the same run:
 * - `openTelemetry()` with only `@opentelemetry/api` (no SDK registered): target at most 1.05×;
 * - `openTelemetry()` with the SDK (tracer and meter providers) and exporters that drop everything.
 * `npm run bench -- telemetry` (or `node --import tsx bench/telemetry.ts`)
 */
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { createRoot, type Instrumentation, memoryJournal, openTelemetry } from '../src/index.js'
import {
  type BenchReport,
  formatMs,
  formatRate,
  formatRatio,
  interleave,
  isMain,
  type Measured,
  msPerOp,
  pairedRatio,
  printReport,
  type Sample,
  table,
  timeLoop,
  verdict,
} from './harness.js'
import { ARGUMENTS_TEXT, lookupPlugin as plugin, NAME } from './lookup-tool.js'

const CALLS_PER_ROUND = 4_000
const ROUNDS = 12
const WARMUP = 3
const TARGET = 1.05

/** Accepts every span and keeps none. */
class DroppingExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    done({ code: 0 })
  }
  async shutdown(): Promise<void> {}
}

/** A metric reader that is never collected: the SDK aggregates, nothing leaves. */
class IdleReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

function round(telemetry: () => Instrumentation | undefined): () => Promise<Sample> {
  return async () => {
    const root = await createRoot({ plugin, journal: memoryJournal(), repair: false, telemetry: telemetry() })
    try {
      const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' } })
      const sample = await timeLoop(CALLS_PER_ROUND, async (index) => {
        const outcome = await turn.tools.execute({ callId: `c${index}`, name: NAME, arguments: ARGUMENTS_TEXT })
        if (outcome.status !== 'completed') throw new Error(`bench call failed: ${outcome.code}`)
      })
      await turn.end()
      return sample
    } finally {
      await root.close()
    }
  }
}

export async function run(): Promise<BenchReport> {
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new DroppingExporter())] })
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] })
  try {
    const measured = await interleave(
      [
        { label: 'no telemetry option (seam no-op)', round: round(() => undefined) },
        { label: 'openTelemetry(), API only, no SDK', round: round(() => openTelemetry()) },
        { label: 'openTelemetry(), SDK + dropping exporter', round: round(() => openTelemetry({ tracerProvider, meterProvider })) },
      ],
      { rounds: ROUNDS, warmup: WARMUP },
    )
    const [none, api, sdk] = measured as [Measured, Measured, Measured]
    const row = (m: Measured) => [m.label, formatRate(1000 / msPerOp(m)), formatMs(msPerOp(m)), m === none ? '1.00×' : formatRatio(pairedRatio(m, none))]
    return {
      name: 'telemetry',
      lines: [
        `telemetry: sequential execute(), memory journal, zod tool; ${ROUNDS} interleaved rounds of ${CALLS_PER_ROUND.toLocaleString('en-US')} calls, medians`,
        ...table(['', 'calls/s', 'per call', 'ratio'], [row(none), row(api), row(sdk)]),
      ],
      verdicts: [verdict('API without an SDK vs no telemetry', api, none, TARGET)],
    }
  } finally {
    await tracerProvider.shutdown()
    await meterProvider.shutdown()
  }
}

if (isMain(import.meta.url)) printReport(await run())

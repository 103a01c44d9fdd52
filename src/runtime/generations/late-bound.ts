import { SeamError } from '../../errors.js'
import type { Instrumentation, TelemetryOptions } from './instrumentation.js'

/**
 * Two things the runtime uses but may not import, because they sit above it (the import-direction
 * rule, test/import-graph.test.ts): the public modules a tool file gets for `seam-runtime` and
 * `seam-runtime/plugin-runtime` (src/index.ts, src/plugin-runtime.ts), and the OpenTelemetry layer
 * behind `createRoot({ telemetry: { …options } })`. src/index.ts binds both as it loads; every host
 * reaches `createRoot` through it (the package's entry, the CLI), so both are bound before a root
 * loads a file.
 */
export interface LateBound {
  /** The host's own modules by specifier: `seam-runtime`, `seam-runtime/plugin-runtime`, `zod`. */
  readonly hostModules: () => Promise<Record<string, unknown>>
  /** `openTelemetry(options)` from src/telemetry. */
  readonly openTelemetry: (options: TelemetryOptions) => Instrumentation
}

let bound: LateBound | undefined

/** Called once, by src/index.ts as it evaluates. */
export function bindLate(value: LateBound): void {
  bound = value
}

/** What src/index.ts bound; a clear error for a host that reached the runtime without it. */
export function lateBound(): LateBound {
  if (bound === undefined) {
    throw new SeamError('INVALID_OPTIONS', "seam-runtime's entry module was not loaded: import createRoot from 'seam-runtime' (src/index.ts), not from an internal file")
  }
  return bound
}

/**
 * What a tool or plugin file gets for `seam-runtime`, `seam-runtime/plugin-runtime` and `zod`: the
 * host's own modules, so brands agree and no second copy loads whatever the folder's node_modules hold.
 */
export function hostModules(): Promise<Record<string, unknown>> {
  return lateBound().hostModules()
}

/** The `telemetry` option as the runtime uses it: a host's `Instrumentation`, or OpenTelemetry's from its options. */
export function instrumentationOf(telemetry: Instrumentation | TelemetryOptions | undefined): Instrumentation | undefined {
  if (telemetry === undefined) return undefined
  if (typeof telemetry !== 'object' || telemetry === null) {
    throw new SeamError('INVALID_OPTIONS', 'telemetry must be an Instrumentation or the options of openTelemetry()')
  }
  return typeof (telemetry as Partial<Instrumentation>).turn === 'function' ? (telemetry as Instrumentation) : lateBound().openTelemetry(telemetry as TelemetryOptions)
}

import { describe, expect, it } from 'vitest'
import { otelWanted } from './otel.js'

describe('seam dev: when telemetry is exported', () => {
  it.each([
    ['neither --otel nor an endpoint', false, {}, false],
    ['--otel', true, {}, true],
    ['OTEL_EXPORTER_OTLP_ENDPOINT alone', false, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, true],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone', false, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }, true],
    ['a blank endpoint', false, { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
    ['--otel with OTEL_SDK_DISABLED=true', true, { OTEL_SDK_DISABLED: 'true' }, false],
  ])('%s → %s', (_, flag, env, wanted) => {
    expect(otelWanted(flag, env)).toBe(wanted)
  })
})

import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { contextFromMeta, traceMeta } from './trace-context.js'

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
const spanId = '00f067aa0ba902b7'

describe('trace context in MCP _meta', () => {
  it('writes the span of a context as traceparent and reads it back as a remote parent', () => {
    const ctx = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED })
    const meta = traceMeta(ctx)
    expect(meta).toEqual({ traceparent: `00-${traceId}-${spanId}-01` })
    expect(trace.getSpanContext(contextFromMeta(meta, ROOT_CONTEXT))).toMatchObject({ traceId, spanId, traceFlags: 1, isRemote: true })
  })

  it('carries tracestate both ways', () => {
    const ctx = contextFromMeta({ traceparent: `00-${traceId}-${spanId}-00`, tracestate: 'vendor=abc,other=1' }, ROOT_CONTEXT)
    expect(traceMeta(ctx)).toEqual({ traceparent: `00-${traceId}-${spanId}-00`, tracestate: 'vendor=abc,other=1' })
  })

  it('writes nothing without a valid span', () => {
    expect(traceMeta(ROOT_CONTEXT)).toBeUndefined()
  })

  it.each([
    ['no _meta', undefined],
    ['a traceparent that is not a string', { traceparent: 7 }],
    ['a malformed traceparent', { traceparent: '00-xyz' }],
    ['an all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-${spanId}-01` }],
    ['an unknown version', { traceparent: `ff-${traceId}-${spanId}-01` }],
  ])('ignores %s and keeps the fallback context', (_, meta) => {
    const fallback = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 0 })
    expect(contextFromMeta(meta, fallback)).toBe(fallback)
  })
})

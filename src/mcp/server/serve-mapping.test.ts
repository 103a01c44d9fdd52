import { describe, expect, it } from 'vitest'
import type { ToolCapability } from '../../seams/capabilities.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import { supportsFormElicitation } from './serve-approval.js'
import { toCallToolResult, toMcpTool } from './serve-mapping.js'

const capability = (parameters: Record<string, unknown>, annotations?: ToolCapability['annotations']) =>
  ({ name: 't', description: 'A tool.', parameters, annotations }) as ToolCapability

const outcome = (fields: Partial<ToolCallOutcome>): ToolCallOutcome => ({
  callId: 'c1',
  name: 't',
  generation: 1,
  status: 'completed',
  content: [{ type: 'text', text: 'done' }],
  durationMs: 1,
  ...fields,
})

describe('toMcpTool', () => {
  it('keeps an object schema as it is, and only the annotations that are set', () => {
    const schema = { type: 'object', properties: { id: { type: 'string' } } }
    const tool = toMcpTool(capability(schema, { readOnlyHint: true }))
    expect(tool.inputSchema).toBe(schema)
    expect(tool.annotations).toEqual({ readOnlyHint: true })
    expect(toMcpTool(capability(schema)).annotations).toBeUndefined()
  })

  it('serves every MCP annotation a tool declares, a remote one passed through included', () => {
    const annotations = { title: 'Read', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
    expect(toMcpTool(capability({ type: 'object' }, annotations)).annotations).toEqual(annotations)
  })

  it('gives a schema without a type `type: object`, and wraps any other type', () => {
    expect(toMcpTool(capability({ properties: {} })).inputSchema).toEqual({ type: 'object', properties: {} })
    expect(toMcpTool(capability({ type: 'string' })).inputSchema).toEqual({ type: 'object', allOf: [{ type: 'string' }] })
  })
})

describe('toCallToolResult', () => {
  it('returns a plain-object value as structuredContent, and nothing else', () => {
    expect(toCallToolResult(outcome({ value: { id: 1 } }))).toEqual({ content: [{ type: 'text', text: 'done' }], structuredContent: { id: 1 } })
    expect(toCallToolResult(outcome({ value: [1, 2] }))).toEqual({ content: [{ type: 'text', text: 'done' }] })
    expect(toCallToolResult(outcome({ value: 'text' }))).toEqual({ content: [{ type: 'text', text: 'done' }] })
  })

  it('marks every other status isError, with the code in front of the text', () => {
    const denied = toCallToolResult(outcome({ status: 'denied', code: 'APPROVAL_UNAVAILABLE', content: [{ type: 'text', text: 'No one could approve.' }] }))
    expect(denied).toEqual({ content: [{ type: 'text', text: '[APPROVAL_UNAVAILABLE] No one could approve.' }], isError: true })
    const image = { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' }
    const failed = toCallToolResult(outcome({ status: 'failed', code: 'TOOL_ERROR', content: [image] }))
    expect(failed.content).toEqual([{ type: 'text', text: '[TOOL_ERROR] The call to "t" failed.' }, image])
    expect(toCallToolResult(outcome({ status: 'cancelled', content: [] })).content).toEqual([
      { type: 'text', text: '[CANCELLED] The call to "t" was cancelled.' },
    ])
  })
})

describe('supportsFormElicitation', () => {
  it.each([
    [undefined, false],
    [{}, false],
    [{ elicitation: {} }, true],
    [{ elicitation: { form: {} } }, true],
    [{ elicitation: { url: {} } }, false],
    [{ elicitation: { form: {}, url: {} } }, true],
  ])('%j → %s', (capabilities, expected) => {
    expect(supportsFormElicitation(capabilities)).toBe(expected)
  })
})

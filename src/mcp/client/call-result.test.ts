import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { fromCallError, fromCallResult, isConnectionFailure, MAX_ERROR_CHARS } from './call-result.js'

const redact = (text: string) => text.split('hunter2').join('***')
const context = { serverId: 'srv', toolName: 'lookup', timeoutMs: 500, redact }

describe('fromCallResult', () => {
  it('keeps the content blocks as content and structuredContent as the output', () => {
    const result = { content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } }
    expect(fromCallResult('lookup', result, redact)).toEqual({ success: true, output: { n: 1 }, content: result.content })
  })

  it('passes content blocks through as content, never as a value to be rendered again', () => {
    const content = [{ type: 'text', text: 'hi' }, { type: 'image', data: 'AA==', mimeType: 'image/png' }]
    expect(fromCallResult('lookup', { content }, redact)).toEqual({ success: true, content })
  })

  it('leaves empty content out when there is a structured value to render', () => {
    expect(fromCallResult('lookup', { content: [], structuredContent: { n: 1 } }, redact)).toEqual({ success: true, output: { n: 1 } })
  })

  it('turns isError into a failure carrying the text blocks, redacted', () => {
    const result = { isError: true, content: [{ type: 'text', text: 'bad password hunter2' }, { type: 'image' }, { type: 'text', text: 'again' }] }
    expect(fromCallResult('lookup', result, redact)).toEqual({
      success: false,
      error: 'bad password ***\nagain',
      metadata: { code: 'tool_error' },
    })
  })

  it('names the tool when an error result has no text', () => {
    expect(fromCallResult('lookup', { isError: true, content: [] }, redact)).toMatchObject({
      error: 'MCP tool "lookup" reported an error',
    })
  })

  it('clips a very long error text', () => {
    const result = { isError: true, content: [{ type: 'text', text: 'x'.repeat(MAX_ERROR_CHARS * 2) }] }
    const failure = fromCallResult('lookup', result, redact)
    expect(!failure.success && failure.error.length).toBe(MAX_ERROR_CHARS)
  })
})

describe('fromCallError', () => {
  it('keeps a protocol error message and its JSON-RPC code', () => {
    expect(fromCallError(new ProtocolError(-32602, 'Unknown tool: lookup'), context)).toEqual({
      success: false,
      error: 'Unknown tool: lookup',
      metadata: { code: 'protocol_error', rpcCode: -32602 },
    })
  })

  it('words a request timeout with the tool and the deadline', () => {
    expect(fromCallError(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out'), context)).toEqual({
      success: false,
      error: 'MCP tool "lookup" timed out after 500 ms',
      metadata: { code: 'timeout', timeoutMs: 500 },
    })
  })

  it('reports a lost connection with the cause code, redacted', () => {
    const error = new TypeError('fetch failed for hunter2', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) })
    expect(fromCallError(error, context)).toEqual({
      success: false,
      error: 'MCP server "srv" failed during "lookup": fetch failed for *** (ECONNREFUSED)',
      metadata: { code: 'connection_lost' },
    })
  })

  it('reports other local SDK verdicts as client errors', () => {
    expect(fromCallError(new SdkError(SdkErrorCode.InvalidResult, 'structuredContent does not match'), context)).toEqual({
      success: false,
      error: 'MCP tool "lookup" failed: structuredContent does not match',
      metadata: { code: 'client_error', sdkCode: SdkErrorCode.InvalidResult },
    })
  })
})

describe('isConnectionFailure', () => {
  it('treats answers and local verdicts as healthy, and transport faults as suspicious', () => {
    expect(isConnectionFailure(new ProtocolError(-32601, 'Method not found'))).toBe(false)
    expect(isConnectionFailure(new SdkError(SdkErrorCode.RequestTimeout, 't'))).toBe(false)
    expect(isConnectionFailure(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'))).toBe(true)
    expect(isConnectionFailure(new TypeError('fetch failed'))).toBe(true)
  })
})

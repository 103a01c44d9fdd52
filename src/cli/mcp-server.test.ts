import { describe, expect, it } from 'vitest'
import { UsageError } from './errors.js'
import { httpServeOptions, isLoopback } from './mcp-server.js'

describe('seam dev MCP HTTP options', () => {
  it('serves loopback without a token, and refuses any other host without one', () => {
    expect(httpServeOptions({ host: '127.0.0.1', port: '4750' }, {})).toEqual({ host: '127.0.0.1', port: 4750 })
    expect(() => httpServeOptions({ host: '0.0.0.0', port: '4750' }, {})).toThrow(UsageError)
    expect(httpServeOptions({ host: '0.0.0.0', port: '0', token: 't1' }, {})).toEqual({ host: '0.0.0.0', port: 0, token: 't1' })
    expect(httpServeOptions({ host: '10.0.0.5', port: '80' }, { SEAM_MCP_TOKEN: 'from-env' })).toMatchObject({ token: 'from-env' })
  })

  it('rejects a port that is not a number in range', () => {
    expect(() => httpServeOptions({ host: '127.0.0.1', port: 'http' }, {})).toThrow(/--port must be a port number/)
    expect(() => httpServeOptions({ host: '127.0.0.1', port: '70000' }, {})).toThrow(UsageError)
  })

  it('knows the loopback names', () => {
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]']) expect(isLoopback(host)).toBe(true)
    for (const host of ['0.0.0.0', '192.168.1.2', 'example.com', '::']) expect(isLoopback(host)).toBe(false)
  })
})

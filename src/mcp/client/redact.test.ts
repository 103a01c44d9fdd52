import { describe, expect, it } from 'vitest'
import { redactedError, redactorFor, safeMessage } from './redact.js'

describe('redactorFor', () => {
  it('hides env values given to a stdio server', () => {
    const redact = redactorFor({ command: 'srv', env: { API_KEY: 'sk-live-abcdef', DEBUG: '1' } })
    expect(redact('auth failed for sk-live-abcdef, debug=1')).toBe('auth failed for ***, debug=1')
  })

  it('hides header values and the bearer token inside them', () => {
    const redact = redactorFor({ url: 'https://mcp.example/x', headers: { authorization: 'Bearer tok_1234567' } })
    expect(redact('got "Bearer tok_1234567"')).toBe('got "***"')
    expect(redact('invalid token tok_1234567')).toBe('invalid token ***')
  })

  it('hides URL credentials and query values', () => {
    const redact = redactorFor({ url: 'https://user:p%40ssw0rd@mcp.example/x?key=qwerty123&v=2' })
    expect(redact('rejected p@ssw0rd and qwerty123')).toBe('rejected *** and ***')
  })

  it('hides query values as the URL spells them too, percent-encoded', () => {
    const redact = redactorFor({ url: 'http://127.0.0.1:4765/mcp?api_key=Zx9%2BQk%2Fsecret%3D%3D' })
    expect(redact('GET /mcp?api_key=Zx9%2BQk%2Fsecret%3D%3D failed; key Zx9+Qk/secret==')).toBe('GET /mcp?api_key=*** failed; key ***')
  })

  it('hides a user name used as a token, and token-like path segments, but keeps named ones', () => {
    const redact = redactorFor({ url: 'https://ghp_abc123def456@mcp.example/api/mcp/s/ZmFrZS10b2tlbi0xMjM0NTY3OA%3D%3D/mcp' })
    expect(redact('401 at https://ghp_abc123def456@mcp.example/api/mcp/s/ZmFrZS10b2tlbi0xMjM0NTY3OA%3D%3D/mcp')).toBe(
      '401 at https://***@mcp.example/api/mcp/s/***/mcp',
    )
    expect(redact('token ZmFrZS10b2tlbi0xMjM0NTY3OA== refused')).toBe('token *** refused')
    const named = redactorFor({ url: 'https://mcp.example/organization-settings/v2/mcp' })
    expect(named('404 at https://mcp.example/organization-settings/v2/mcp')).toBe('404 at https://mcp.example/organization-settings/v2/mcp')
  })

  it('keeps working on a path with a malformed percent escape', () => {
    const redact = redactorFor({ url: 'https://mcp.example/hooks/T01234567%ZZB0123456789abcdef/mcp' })
    expect(redact('failed: T01234567%ZZB0123456789abcdef')).toBe('failed: ***')
  })

  it('replaces the longest secret first', () => {
    const redact = redactorFor({ command: 'srv', env: { A: 'abcd', B: 'abcdefgh' } })
    expect(redact('abcdefgh abcd')).toBe('*** ***')
  })
})

describe('safeMessage and redactedError', () => {
  const redact = redactorFor({ command: 'srv', env: { TOKEN: 'secret-token' } })

  it('adds the cause code and redacts', () => {
    const error = new TypeError('fetch failed with secret-token', { cause: { code: 'ECONNREFUSED' } })
    expect(safeMessage(error, redact)).toBe('fetch failed with *** (ECONNREFUSED)')
  })

  it('builds a cause that keeps the name and code but not the secret', () => {
    const copy = redactedError(Object.assign(new RangeError('bad secret-token'), { code: 'E_BAD' }), redact)
    expect(copy).toMatchObject({ name: 'RangeError', message: 'bad ***', code: 'E_BAD' })
  })
})

import { describe, expect, it } from 'vitest'
import { Logger } from './logger.js'
import { protectEvent } from './privacy.js'
import { isSecretKey, knowsSecrets, looksLikeCredentials, redactText, registerSecret, scrubValues } from './redact.js'
import type { JournalEvent } from '../../seams/journal.js'

// Read once, on first use: set before any test of this file redacts anything.
process.env.SEAM_TEST_DB_CONN = 'Server=db.internal;Database=app;User Id=sa;Password=Zx9-env-conn-secret;'
process.env.SEAM_TEST_STRIPE_KEY = 'sk_live_env_value_12345'
process.env.SEAM_TEST_DB_URL = 'postgres://app:url%2Fenv-pw-77@db.internal/app'
process.env.SEAM_TEST_MYSQL_PWD = 'mysql-pwd-value-99'
process.env.SEAM_TEST_XDG_SESSION_TYPE = 'wayland-session'
process.env.SEAM_TEST_QUOTED_KEY = 'quote"and\\slash-key-88'
// The shell's working folders: `PWD` reads like a password key, but holds a path that logs print.
process.env.PWD = '/srv/seam-workspace-here'
process.env.OLDPWD = '/srv/seam-workspace-before'

/** Each shape a fault campaign found stored verbatim, with the secret it must not keep. */
const CORPUS: readonly [string, string, string][] = [
  ['truncated JSON', '{"user":"ann","password":"hunter2-trunc', 'hunter2-trunc'],
  ['JSON with a trailing comma', '{"token":"tok-trailing-1",}', 'tok-trailing-1'],
  ['a db_pass key', '{"db_pass":"dbpass-value-1"}', 'dbpass-value-1'],
  ['a passcode key', '{"passcode":"778899-code"}', '778899-code'],
  ['an x-auth key', '{"x-auth":"xauth-value-1"}', 'xauth-value-1'],
  ['a bearer key', '{"bearer":"bearer-key-value"}', 'bearer-key-value'],
  ['a header pair', '[["Authorization","Bearer abc.def.ghi-pair"]]', 'abc.def.ghi-pair'],
  ['a header pair without a scheme', '[["X-Api-Key","raw-pair-key-1"]]', 'raw-pair-key-1'],
  ['a URL with credentials', 'fetching https://bob:url-pass-1@example.com/data', 'url-pass-1'],
  ['a URL with api_key=', 'GET https://api.example.com/v1?q=x&api_key=query-key-1&n=2', 'query-key-1'],
  ['a connection string', 'Server=db;Database=prod;User Id=sa;Password=conn-pass-1;', 'conn-pass-1'],
  ['an error message', 'connect ECONNREFUSED postgres://app:err-pass-1@10.0.0.5/prod', 'err-pass-1'],
  ['a YAML-ish line', 'client_secret: yaml-secret-1', 'yaml-secret-1'],
  ['an Authorization header line', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpwYXNzd29yZA=='],
  ["the host's own credential env value", 'env printed: MY_CONN=Server=db.internal;Database=app;User Id=sa;Password=Zx9-env-conn-secret;', 'Zx9-env-conn-secret'],
  ["the host's own key env value, anywhere", 'leaked sk_live_env_value_12345 in output', 'sk_live_env_value_12345'],
]

describe('redactText', () => {
  it.each(CORPUS)('removes the secret from %s', (_shape, text, secret) => {
    const redacted = redactText(text)
    expect(redacted).not.toContain(secret)
    expect(redacted).toContain('[redacted]')
  })

  it("leaves the shell's working folders (PWD, OLDPWD) alone: they are paths, not passwords", () => {
    const line = 'workspace root {"root":"/srv/seam-workspace-here"}, was /srv/seam-workspace-before'
    expect(redactText(line)).toBe(line)
  })

  it('leaves ordinary text, and JSON literals under secret keys, alone', () => {
    for (const text of ['{"id":"T-1","limit":3}', 'keyword search for monkey keys', 'the author passed the test', '{"token":null}', 'https://example.com/a?b=c']) {
      expect(redactText(text)).toBe(text)
    }
  })

  it('scrubs a value a host registers, until its disposer runs', () => {
    const dispose = registerSecret('vault-issued-9f8e7d')
    expect(redactText('token vault-issued-9f8e7d used')).toBe('token [redacted] used')
    dispose()
    expect(redactText('vault-issued-9f8e7d')).toBe('vault-issued-9f8e7d')
    expect(() => registerSecret('abc')).toThrow(/at least 6/)
  })

  it('recognises the keys the campaign found missed, and connection strings', () => {
    for (const key of ['db_pass', 'passcode', 'x-auth', 'bearer', 'DB_PASSWORD', 'session_id']) expect(isSecretKey(key), key).toBe(true)
    expect(looksLikeCredentials('Server=db;Uid=sa;Pwd=x;')).toBe(true)
    expect(looksLikeCredentials('redis://:pw@cache:6379')).toBe(true)
    expect(looksLikeCredentials('https://example.com')).toBe(false)
  })
})

describe('the known secret values', () => {
  it("scrubs the passwords inside the environment's URLs and connection strings on their own, decoded too", () => {
    const text = 'auth failed for "Zx9-env-conn-secret"; retry with url/env-pw-77 or url%2Fenv-pw-77'
    expect(redactText(text)).toBe('auth failed for "[redacted]"; retry with [redacted] or [redacted]')
  })

  it('scrubs variables named like credentials (MYSQL_PWD), not every name with a secret-ish word (XDG_SESSION_TYPE)', () => {
    expect(scrubValues('mysql-pwd-value-99 on wayland-session')).toBe('[redacted] on wayland-session')
  })

  it('scrubs a value also as JSON escapes it inside a string', () => {
    const json = JSON.stringify({ text: `key ${process.env.SEAM_TEST_QUOTED_KEY}` })
    expect(json).not.toContain(process.env.SEAM_TEST_QUOTED_KEY)
    expect(scrubValues(json)).toBe('{"text":"key [redacted]"}')
  })

  it('looks into the values of pairs whose key is not secret: a URL query, KEY=value inside a JSON string', () => {
    expect(redactText('{"url":"https://api.example.com/?api_key=first-key-1&n=2"}')).toBe('{"url":"https://api.example.com/?api_key=[redacted]&n=2"}')
    expect(redactText('GET https://api.example.com/v1?access_token=tok-first-2')).toBe('GET https://api.example.com/v1?access_token=[redacted]')
    expect(redactText('{"note":"export OPENAI_API_KEY=sk-line-3 then run"}')).toBe('{"note":"export OPENAI_API_KEY=[redacted] then run"}')
  })

  it('knows a registered value at once, and forgets it when its last disposer runs', () => {
    const first = registerSecret('twice-registered-1')
    const second = registerSecret('twice-registered-1')
    expect(knowsSecrets()).toBe(true)
    first()
    expect(scrubValues('x twice-registered-1')).toBe('x [redacted]')
    second()
    expect(scrubValues('x twice-registered-1')).toBe('x twice-registered-1')
  })
})

describe('one redactor for every journaled and logged string', () => {
  const base = { turnId: 't', seq: 2, at: 0 }

  it('redacts tool/result content, approval reasons and summaries, and malformed arguments', () => {
    const result = protectEvent({ ...base, kind: 'tool/result', callId: 'c', status: 'failed', content: [{ type: 'text', text: 'failed: postgres://app:res-pass-1@db/x' }], durationMs: 1 } as JournalEvent)
    expect(JSON.stringify(result)).not.toContain('res-pass-1')
    const asked = protectEvent({ ...base, kind: 'approval/asked', callId: 'c', name: 'n', reason: 'uses token=reason-secret-1', summary: 'n password="sum-secret-1"' } as JournalEvent)
    expect(JSON.stringify(asked)).not.toMatch(/reason-secret-1|sum-secret-1/)
    const call = protectEvent({ ...base, kind: 'tool/call', callId: 'c', name: 'n', arguments: '{"api_key":"arg-secret-1",', generation: 1 } as JournalEvent)
    expect(JSON.stringify(call)).not.toContain('arg-secret-1')
    // A model can send a secret as the tool name.
    const named = protectEvent({ ...base, kind: 'tool/call', callId: 'c', name: 'sk_live_env_value_12345', arguments: '{}', generation: 1 } as JournalEvent)
    expect(named).toMatchObject({ name: '[redacted]' })
  })

  it('redacts log messages and log fields', () => {
    const lines: string[] = []
    const logger = new Logger((_level, _scope, message, fields) => lines.push(`${message} ${JSON.stringify(fields)}`))
    logger.warn('retrying https://u:log-pass-1@host/x', { error: 'Password=log-pass-2;', nested: { header: 'Bearer log-token-3' } })
    expect(lines[0]).not.toMatch(/log-pass-1|log-pass-2|log-token-3/)
  })
})

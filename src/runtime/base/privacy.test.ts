import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { DEFAULT_MAX_PAYLOAD_BYTES, isSecretKey, protectEvent, redactArguments, truncateText } from './privacy.js'
import type { JournalEvent } from '../../seams/journal.js'

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')

describe('isSecretKey', () => {
  it('recognises secret-looking keys whatever their case and separators', () => {
    const secret = ['password', 'PASSWD', 'db_password', 'passphrase', 'clientSecret', 'access_token', 'refreshToken']
    secret.push('apiKey', 'API_KEY', 'x-api-key', 'Authorization', 'cookie', 'Set-Cookie', 'credentials')
    secret.push('private_key', 'privateKey', 'aws_access_key_id', 'auth', 'pwd')
    for (const key of secret) expect(isSecretKey(key), key).toBe(true)
  })

  it('leaves ordinary keys alone', () => {
    for (const key of ['user', 'query', 'path', 'author', 'keyword', 'monkey', 'passenger', 'id']) {
      expect(isSecretKey(key), key).toBe(false)
    }
  })
})

describe('redactArguments', () => {
  it('replaces secrets in nested objects and arrays, keeping everything else', () => {
    const raw = JSON.stringify({
      url: 'https://example.com',
      headers: { Authorization: 'Bearer abc', accept: 'json' },
      accounts: [{ name: 'a', password: 'p1' }, { name: 'b', credentials: { user: 'b', key: 'k' } }],
      list: ['token', 'plain'],
    })
    expect(JSON.parse(redactArguments(raw))).toEqual({
      url: 'https://example.com',
      headers: { Authorization: '[redacted]', accept: 'json' },
      accounts: [
        { name: 'a', password: '[redacted]' },
        { name: 'b', credentials: '[redacted]' },
      ],
      list: ['token', 'plain'],
    })
  })

  it('finds keys written with JSON escapes', () => {
    expect(JSON.parse(redactArguments('{"pass\\u0077ord":"hunter2"}'))).toEqual({ password: '[redacted]' })
  })

  it('keeps arguments with nothing to redact byte for byte, spacing included', () => {
    const raw = '{ "query" :  "monkey keys",\n "limit": 10 }'
    expect(redactArguments(raw)).toBe(raw)
  })

  it('redacts secrets in arguments that are not JSON, or are truncated or malformed JSON', () => {
    expect(redactArguments('password=hunter2 (not json')).toBe('password=[redacted] (not json')
    expect(redactArguments('{"user":"a","db_pass":"hunter2"')).toBe('{"user":"a","db_pass":"[redacted]"')
    expect(redactArguments('{"token":"abc123", }')).toBe('{"token":"[redacted]", }')
    expect(redactArguments('{"api_key":"sk-live-1234')).toBe('{"api_key":"[redacted]')
  })

  it('keeps a null secret as null', () => {
    expect(redactArguments('{"token":null}')).toBe('{"token":null}')
  })

  it('does not keep a secret that a later duplicate key hid from the parse', () => {
    expect(redactArguments('{"password":"hunter2","password":null}')).toBe('{"password":null}')
  })
})

describe('truncateText', () => {
  it('keeps text that fits, up to the last byte', () => {
    expect(truncateText('a'.repeat(100), 100)).toBe('a'.repeat(100))
    expect(truncateText('é'.repeat(50), 100)).toBe('é'.repeat(50))
  })

  it('stores a prefix and a marker with the byte length and sha256, within the limit', () => {
    const text = 'x'.repeat(81_234)
    const stored = truncateText(text, 1000)
    expect(stored).toMatch(/^x+…\[truncated: 81234 bytes, sha256:[0-9a-f]{64}\]$/)
    expect(stored).toContain(sha256(text))
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(1000)
    expect(Buffer.byteLength(stored)).toBeGreaterThan(900)
  })

  it('never splits a character', () => {
    const text = '😀'.repeat(500)
    const stored = truncateText(text, 301)
    const prefix = stored.slice(0, stored.indexOf('…'))
    expect(prefix).toBe('😀'.repeat(prefix.length / 2))
    expect(stored).toContain('2000 bytes')
  })
})

describe('protectEvent', () => {
  const base = { turnId: 't1', seq: 1, at: 0 }

  it('redacts and truncates tool arguments', () => {
    const args = JSON.stringify({ apiKey: 'k', body: 'y'.repeat(500) })
    const stored = protectEvent({ ...base, kind: 'tool/call', callId: 'c1', name: 'n', arguments: args, generation: 1 }, 200)
    const text = (stored as { arguments: string }).arguments
    const redacted = JSON.stringify({ apiKey: '[redacted]', body: 'y'.repeat(500) })
    expect(text).toMatch(/^\{"apiKey":"\[redacted\]","body":"y+…\[truncated: /)
    expect(text).toContain(`${redacted.length} bytes, sha256:${sha256(redacted)}]`)
  })

  it('truncates large text and image content and approval summaries', () => {
    const resultEvent: JournalEvent = {
      ...base,
      kind: 'tool/result',
      callId: 'c1',
      status: 'completed',
      content: [
        { type: 'text', text: 'short' },
        { type: 'text', text: 'z'.repeat(300) },
        { type: 'image', data: 'A'.repeat(300), mimeType: 'image/png' },
      ],
      durationMs: 1,
    }
    const stored = protectEvent(resultEvent, 200) as typeof resultEvent & { kind: 'tool/result' }
    expect(stored.content[0]).toBe((resultEvent as typeof stored).content[0])
    expect(stored.content[1]).toMatchObject({ type: 'text', text: expect.stringContaining('truncated: 300 bytes') })
    expect(stored.content[2]).toMatchObject({ mimeType: 'image/png', data: expect.stringContaining('truncated: 300 bytes') })
    const asked = protectEvent({ ...base, kind: 'approval/asked', callId: 'c1', name: 'n', reason: 'r', summary: 's'.repeat(300) }, 200)
    expect(asked).toMatchObject({ summary: expect.stringContaining('truncated: 300 bytes') })
  })

  it('truncates large audio data and embedded resources, and keeps resource links as they are', () => {
    const link = { type: 'resource_link' as const, uri: 'file:///a', name: 'a' }
    const resultEvent: JournalEvent = {
      ...base,
      kind: 'tool/result',
      callId: 'c1',
      status: 'completed',
      content: [
        { type: 'audio', data: 'A'.repeat(300), mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///b', text: 'b'.repeat(300) } },
        { type: 'resource', resource: { uri: 'file:///c', blob: 'C'.repeat(300) } },
        link,
      ],
      durationMs: 1,
    }
    const stored = protectEvent(resultEvent, 200) as typeof resultEvent & { kind: 'tool/result' }
    expect(stored.content[0]).toMatchObject({ mimeType: 'audio/wav', data: expect.stringContaining('truncated: 300 bytes') })
    expect(stored.content[1]).toMatchObject({ resource: { uri: 'file:///b', text: expect.stringContaining('truncated: 300 bytes') } })
    expect(stored.content[2]).toMatchObject({ resource: { uri: 'file:///c', blob: expect.stringContaining('truncated: 300 bytes') } })
    expect(stored.content[3]).toBe(link)
  })

  it('returns the event itself when nothing needs protecting', () => {
    const event: JournalEvent = { ...base, kind: 'tool/call', callId: 'c1', name: 'n', arguments: '{"q":1}', generation: 1 }
    expect(protectEvent(event)).toBe(event)
    expect(DEFAULT_MAX_PAYLOAD_BYTES).toBe(65_536)
  })
})

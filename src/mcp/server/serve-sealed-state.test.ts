import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, type Root } from '../../index.js'
import { type ServePlugin, servePlugin } from '../fixtures/serve-plugin.js'
import { createSealedStateCodec } from './sealed-state.js'
import { serveHttp } from './serve.js'

const text = (result: { content: unknown }) => (result.content as { text: string }[]).map((c) => c.text).join('\n')

/**
 * A 2026-07-28 client that answers `once`, over a fetch that records the `requestState` its
 * retries carry and may rewrite it first (a client tampering with the state).
 */
async function modernClient(url: string, tamper?: (state: string) => string) {
  const states: string[] = []
  const recording: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string' && init.body.includes('"requestState"')) {
      const body = JSON.parse(init.body) as { params: { requestState: string } }
      states.push(body.params.requestState)
      if (tamper) body.params.requestState = tamper(body.params.requestState)
      init = { ...init, body: JSON.stringify(body) }
    }
    return fetch(input, init)
  }
  const client = new Client({ name: 'sealed', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } })
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { decision: 'once' } }))
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }))
  onTestFinished(() => client.close())
  return { client, states }
}

describe('the sealed requestState of a 2026-07-28 approval round', () => {
  let plugin: ServePlugin
  let root: Root
  let server: { url: string; close(): Promise<void> }

  beforeAll(async () => {
    plugin = await servePlugin()
    root = await createRoot({ dir: plugin.dir })
    server = await serveHttp(root, { port: 0 })
  })
  afterAll(async () => {
    await server.close()
    await root.close()
    await plugin.remove()
  })

  it('carries the parked call back without the client being able to read its resume token', async () => {
    const { client, states } = await modernClient(server.url)
    const result = await client.callTool({ name: 'wipe', arguments: { id: 11 } })
    expect(text(result)).toBe('wiped ticket 11')
    expect(states).toHaveLength(1)
    const [round] = await root.journal.coordination.parked({ settled: true, callId: (await root.journal.tail(10)).findLast((e) => e.kind === 'tool/result')!.callId })
    expect(round).toBeDefined()
    const state = states[0]!
    // Neither as sent nor decoded (every dot-separated part as base64url) does it show the token or the call.
    const decoded = state.split('.').map((part) => Buffer.from(part, 'base64url').toString('latin1'))
    for (const view of [state, ...decoded]) {
      expect(view).not.toContain(round!.token)
      expect(view).not.toContain(round!.callId)
      expect(view).not.toContain('wipe')
    }
  })

  it('refuses a state the client changed, and leaves the parked call undecided', async () => {
    const flip = (state: string) => {
      const i = state.length - 10
      return state.slice(0, i) + (state[i] === 'A' ? 'B' : 'A') + state.slice(i + 1)
    }
    const { client, states } = await modernClient(server.url, flip)
    await expect(client.callTool({ name: 'wipe', arguments: { id: 12 } })).rejects.toThrow()
    expect(states).toHaveLength(1)
    const waiting = await root.journal.coordination.parked({})
    expect(waiting.filter((p) => p.name === 'wipe' && p.decision === undefined)).toHaveLength(1)
  })

  it('opens only with its key: another key, an expired state and a malformed one are refused', () => {
    const secret = 'a configured secret of at least thirty-two bytes'
    const one = createSealedStateCodec<{ token: string }>({ secret, ttlSeconds: 60 })
    const same = createSealedStateCodec<{ token: string }>({ secret, ttlSeconds: 60 })
    const other = createSealedStateCodec<{ token: string }>({ ttlSeconds: 60 })
    const sealed = one.mint({ token: 'resume-me' })
    expect(same.open(sealed)).toEqual({ token: 'resume-me' })
    expect(() => other.open(sealed)).toThrow()
    expect(() => createSealedStateCodec({ secret, ttlSeconds: -1 }).open(createSealedStateCodec({ secret, ttlSeconds: -1 }).mint({}))).toThrow('expired')
    expect(() => one.open('s1.AAAA')).toThrow('malformed')
    expect(() => createSealedStateCodec({ secret: 'short', ttlSeconds: 60 })).toThrow(/at least 32 bytes/)
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { sqliteJournal } from '../../runtime/journal/sqlite.js'
import { redactText } from '../../runtime/base/redact.js'
import { type OAuthFixture, startOAuthFixture } from '../fixtures/oauth-server.js'
import { McpToolService } from './mcp-tool-service.js'
import { MemoryOAuthTokenStore } from '../../seams/oauth-tokens.js'

/** A person who allows every sign-in: opens the authorize page, follows its link, reads the redirect. */
async function allow({ url }: { url: URL }): Promise<URL> {
  const page = await (await fetch(url)).text()
  const link = /href="([^"]+)"/.exec(page)?.[1]?.replace(/&amp;/g, '&')
  if (!link) throw new Error(`no sign-in link on the page: ${page}`)
  const answer = await fetch(link, { redirect: 'manual' })
  return new URL(answer.headers.get('location')!)
}

describe('McpToolService({ auth }) against a protected MCP server and its authorization server', () => {
  let server: OAuthFixture
  beforeEach(async () => {
    server = await startOAuthFixture()
  })
  afterEach(async () => {
    await server.close()
  })

  function mount(auth: ConstructorParameters<typeof McpToolService>[0]['auth']): McpToolService {
    const service = new McpToolService({ id: 'protected', transport: { url: server.url }, protocol: '2025-11-25', auth })
    onTestFinished(() => service.dispose())
    return service
  }

  it('fails to connect without auth: the server answers 401', async () => {
    const service = new McpToolService({ id: 'bare', transport: { url: server.url }, protocol: '2025-11-25', reconnect: { initialDelayMs: 10_000 } })
    onTestFinished(() => service.dispose())
    await expect(service.connect()).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' })
  })

  it('authorizes with client credentials (client_secret_basic) found by discovery, and calls tools', async () => {
    const service = mount({ grant: 'client_credentials', clientId: server.client.id, clientSecret: server.client.secret })
    await service.connect()
    expect(await service.execute('global', 'echo', { text: 'hi' })).toEqual({ success: true, content: [{ type: 'text', text: 'echo: hi' }] })
    expect(server.grants).toEqual(['client_credentials'])
    const bearer = server.seenHeaders.map((headers) => headers.get('authorization')).filter((value) => value?.startsWith('Bearer '))
    expect(bearer.length).toBeGreaterThan(1)
    expect(bearer.every((value) => value === `Bearer ${server.issued[0]}`)).toBe(true)
  })

  it('refuses a wrong client secret without the secret in the error', async () => {
    const wrong = `wrong-${server.client.secret}`
    const service = mount({ grant: 'client_credentials', clientId: server.client.id, clientSecret: wrong })
    const error = await service.connect().then(
      () => undefined,
      (failure: Error) => failure,
    )
    expect(error).toMatchObject({ code: 'PROVIDER_UNAVAILABLE' })
    expect(JSON.stringify({ message: error?.message, diagnostic: service.diagnostic })).not.toContain(wrong)
  })

  it('signs a person in: dynamic registration, PKCE, the callback with state and iss, then the call', async () => {
    const store = new MemoryOAuthTokenStore()
    const seen: URL[] = []
    const service = mount({
      grant: 'authorization_code',
      redirectUrl: 'http://127.0.0.1:1/callback',
      store,
      signIn: async (request) => {
        seen.push(request.url)
        expect(request.server).toBe('protected')
        return allow(request)
      },
    })
    await service.connect()
    expect(await service.execute('global', 'echo', { text: 'signed in' })).toMatchObject({ success: true })
    expect(seen).toHaveLength(1)
    expect(seen[0]!.searchParams.get('code_challenge_method')).toBe('S256')
    expect(seen[0]!.searchParams.get('resource')).toBe(server.url)
    expect(seen[0]!.searchParams.get('scope')).toBe('tools')
    expect(server.grants).toEqual(['authorization_code'])
    const record = await store.get(`protected ${server.url}`)
    expect(record?.client?.client_id).toMatch(/^dcr-/)
    expect(record?.tokens?.refresh_token).toMatch(/^rt-/)
  })

  it('refreshes on 401 with the refresh token, without asking the person again', async () => {
    let signIns = 0
    const service = mount({
      grant: 'authorization_code',
      redirectUrl: 'http://127.0.0.1:1/callback',
      signIn: (request) => {
        signIns++
        return allow(request)
      },
    })
    await service.connect()
    server.expireAccessTokens()
    expect(await service.execute('global', 'echo', { text: 'after expiry' })).toMatchObject({ success: true })
    expect(server.grants).toEqual(['authorization_code', 'refresh_token'])
    expect(signIns).toBe(1)
  })

  it('keeps every token it obtained out of redacted text (the journal and the log pass through redactText)', async () => {
    const service = mount({ grant: 'authorization_code', redirectUrl: 'http://127.0.0.1:1/callback', signIn: allow })
    await service.connect()
    expect(server.issued.length).toBeGreaterThanOrEqual(2)
    // A server that echoes a token in a tool result or an error: what the journal would store.
    const echoed = redactText(JSON.stringify({ result: `token was ${server.issued[0]} and ${server.issued[1]}` }))
    for (const token of server.issued) expect(echoed).not.toContain(token)
    const result = await service.execute('global', 'echo', { text: server.issued[0] })
    expect(JSON.stringify(result)).toContain(server.issued[0])
    expect(redactText(JSON.stringify(result))).not.toContain(server.issued[0])
  })

  it('shares one sign-in between two hosts through the journal database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-oauth-hosts-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const journals = [sqliteJournal(join(dir, 'journal.db'), { hostId: 'a' }), sqliteJournal(join(dir, 'journal.db'), { hostId: 'b' })]
    onTestFinished(() => Promise.all(journals.map((journal) => journal.close())).then(() => undefined))
    let signIns = 0
    const options = (store: (typeof journals)[number]['oauthTokens']) =>
      ({
        grant: 'authorization_code',
        redirectUrl: 'http://127.0.0.1:1/callback',
        store,
        signIn: (request: { url: URL }) => {
          signIns++
          return allow(request)
        },
      }) as const
    await mount(options(journals[0]!.oauthTokens)).connect()
    const second = mount(options(journals[1]!.oauthTokens))
    await second.connect()
    expect(await second.execute('global', 'echo', { text: 'host b' })).toMatchObject({ success: true })
    expect(signIns).toBe(1)
    expect(server.grants).toEqual(['authorization_code'])
  })

  it('rejects auth on a stdio transport and an incomplete client credentials grant', () => {
    expect(() => new McpToolService({ id: 'x', transport: { command: 'true' }, auth: { grant: 'client_credentials', clientId: 'a', clientSecret: 'b' } })).toThrow(
      /streamable HTTP/,
    )
    expect(() => new McpToolService({ id: 'x', transport: { url: server.url }, auth: { grant: 'client_credentials', clientId: 'a' } })).toThrow(/clientSecret or a privateKey/)
  })
})

import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createRoot } from '../index.js'
import { McpToolService } from '../mcp/client/mcp-tool-service.js'
import { provideOAuthSignIn, StoredOAuthProvider } from '../mcp/client/oauth.js'
import { startOAuthFixture } from '../mcp/fixtures/oauth-server.js'
import { memoryJournal } from '../runtime/journal/memory.js'
import { definePlugin } from '../runtime/plugins/plugin.js'
import { ConsoleApprovals } from './approvals.js'
import { createConsole } from './console.js'
import { ConsoleSignIns } from './sign-ins.js'
import type { SignInQueueView } from './types.js'

const AUTHORIZE = 'https://auth.example.com/authorize?client_id=c&code_challenge=x&code_challenge_method=S256'

function request(state: string | undefined, signal = new AbortController().signal, base = AUTHORIZE) {
  const url = new URL(base)
  if (state !== undefined) url.searchParams.set('state', state)
  return { server: 'docs', url, signal }
}

/** A console with sign-ins (and a login token), served on a loopback port. */
async function consoleServer(signIns: ConsoleSignIns) {
  const root = await createRoot({ plugin: definePlugin({ name: 'root', setup() {} }), journal: memoryJournal(), approval: new ConsoleApprovals() })
  const web = createConsole(root, { approvals: new ConsoleApprovals(), signIns, token: 'console-token-123' })
  const server = createServer((req, res) => void web.handle(req, res).then((handled) => handled || res.writeHead(404).end()))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  signIns.serveAt(origin)
  onTestFinished(async () => {
    web.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await root.close()
  })
  return origin
}

describe('the console’s sign-in queue', () => {
  it('refuses sign-ins until the console is served, since nothing could come back', async () => {
    const signIns = new ConsoleSignIns()
    expect(() => signIns.redirectUrl).toThrow(/not serving/)
    await expect(signIns.signIn(request('s1'))).rejects.toThrow(/not serving/)
    signIns.serveAt('http://127.0.0.1:4750/')
    expect(signIns.redirectUrl).toBe('http://127.0.0.1:4750/oauth/callback')
  })

  it('lists a sign-in until the callback brings its state, then hands the query over once', async () => {
    const signIns = new ConsoleSignIns()
    signIns.serveAt('http://127.0.0.1:4750/')
    const seen: SignInQueueView[] = []
    signIns.onChange((queue) => seen.push(queue))
    const waiting = signIns.signIn(request('state-a'))
    expect(signIns.pending()).toMatchObject([{ server: 'docs', url: expect.stringContaining('state=state-a') }])
    expect(signIns.callback(new URLSearchParams({ state: 'someone-else', code: 'c0de-xyz' }))).toEqual({ ok: false })
    expect(signIns.pending()).toHaveLength(1)
    expect(signIns.callback(new URLSearchParams({ state: 'state-a', code: 'c0de-abc' }))).toEqual({ ok: true, server: 'docs' })
    expect((await waiting).get('code')).toBe('c0de-abc')
    expect(signIns.pending()).toEqual([])
    expect(signIns.callback(new URLSearchParams({ state: 'state-a', code: 'c0de-abc' }))).toEqual({ ok: false })
    expect(seen.map((queue) => queue.pending.length)).toEqual([1, 0])
    expect(seen[1]!.version).toBeGreaterThan(seen[0]!.version)
  })

  it('withdraws a sign-in whose service gave up, and refuses its callback afterwards', async () => {
    const signIns = new ConsoleSignIns()
    signIns.serveAt('http://127.0.0.1:4750/')
    const abandon = new AbortController()
    const waiting = signIns.signIn(request('state-b', abandon.signal))
    expect(signIns.pending()).toHaveLength(1)
    abandon.abort(new Error('the call timed out'))
    await expect(waiting).rejects.toThrow('the call timed out')
    expect(signIns.pending()).toEqual([])
    expect(signIns.callback(new URLSearchParams({ state: 'state-b', code: 'late' }))).toEqual({ ok: false })
  })

  it('passes an authorization server’s refusal to the waiting service, and refuses links that are not web pages', async () => {
    const signIns = new ConsoleSignIns()
    signIns.serveAt('http://127.0.0.1:4750/')
    const waiting = signIns.signIn(request('state-c'))
    expect(signIns.callback(new URLSearchParams({ state: 'state-c', error: 'access_denied' }))).toEqual({ ok: true, server: 'docs', refused: 'access_denied' })
    expect((await waiting).get('error')).toBe('access_denied')
    await expect(signIns.signIn(request('state-d', undefined, 'javascript:alert(1)//'))).rejects.toThrow(/not http/)
    await expect(signIns.signIn(request(undefined))).rejects.toThrow(/no state/)
    expect(signIns.pending()).toEqual([])
  })
})

describe('a sign-in a call waits on', () => {
  function started(signIns: ConsoleSignIns) {
    const provider = new StoredOAuthProvider({ grant: 'authorization_code', redirectUrl: signIns.redirectUrl, signIn: (r) => signIns.signIn(r) }, { server: 'docs', url: 'http://127.0.0.1:1/mcp', signal: new AbortController().signal })
    onTestFinished(() => provider.dispose())
    provider.redirectToAuthorization(request('state-call').url)
    return provider
  }

  it('is withdrawn from the console when the only call waiting on it is aborted (timed out, cancelled)', async () => {
    const signIns = new ConsoleSignIns()
    signIns.serveAt('http://127.0.0.1:4750/')
    const provider = started(signIns)
    const call = new AbortController()
    const waiting = provider.finishSignIn(new URL('http://127.0.0.1:1/mcp'), undefined, call.signal)
    await until(() => signIns.pending().length === 1)
    call.abort(new Error('the call timed out'))
    await expect(waiting).rejects.toThrow('the call timed out')
    await until(() => signIns.pending().length === 0)
    await until(() => !provider.signingIn)
    expect(signIns.callback(new URLSearchParams({ state: 'state-call', code: 'late-code' }))).toEqual({ ok: false })
  })

  it('stays listed while a connection attempt still waits on it, after a call gave up', async () => {
    const signIns = new ConsoleSignIns()
    signIns.serveAt('http://127.0.0.1:4750/')
    const provider = started(signIns)
    const attempt = provider.finishSignIn(new URL('http://127.0.0.1:1/mcp'))
    attempt.catch(() => {})
    const call = new AbortController()
    const waiting = provider.finishSignIn(new URL('http://127.0.0.1:1/mcp'), undefined, call.signal)
    call.abort(new Error('cancelled'))
    await expect(waiting).rejects.toThrow('cancelled')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(signIns.pending()).toHaveLength(1)
    expect(provider.signingIn).toBe(true)
  })
})

/** Polls `check` until true, for at most two seconds. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(check()).toBe(true)
}

describe('the console’s /oauth/callback route and a mount that signs in through it', () => {
  it('answers an unknown state with a refusal page, without a console login', async () => {
    const origin = await consoleServer(new ConsoleSignIns())
    const answer = await fetch(new URL('/oauth/callback?state=forged&code=c0de-forged', origin))
    expect(answer.status).toBe(400)
    const page = await answer.text()
    expect(page).toContain('Sign-in not recognised')
    expect(page).not.toContain('c0de-forged')
  })

  it('signs a McpToolService in that names no signIn of its own: the listed link, the callback page, then the call', async () => {
    const fixture = await startOAuthFixture()
    onTestFinished(() => fixture.close())
    const signIns = new ConsoleSignIns()
    const origin = await consoleServer(signIns)
    onTestFinished(provideOAuthSignIn(signIns))
    const service = new McpToolService({ id: 'protected', transport: { url: fixture.url }, protocol: '2025-11-25', auth: { grant: 'authorization_code' } })
    onTestFinished(() => service.dispose())
    const connected = service.connect()
    const { url } = await new Promise<{ url: string }>((resolve) => {
      const [first] = signIns.pending()
      if (first) resolve(first)
      else signIns.onChange((queue) => queue.pending[0] && resolve(queue.pending[0]))
    })
    expect(new URL(url).searchParams.get('redirect_uri')).toBe(new URL('/oauth/callback', origin).href)
    // The person: the authorization server's page, its Allow link, and the way back to the console.
    const link = /href="([^"]+)"/.exec(await (await fetch(url)).text())![1]!.replace(/&amp;/g, '&')
    const back = (await fetch(link, { redirect: 'manual' })).headers.get('location')!
    const landing = await fetch(back)
    expect(landing.status).toBe(200)
    const page = await landing.text()
    expect(page).toContain('Signed in to protected')
    expect(page).not.toContain(new URL(back).searchParams.get('code')!)
    await connected
    expect(await service.execute('global', 'echo', { text: 'through the console' })).toMatchObject({ success: true, content: [{ text: 'echo: through the console' }] })
    expect(signIns.pending()).toEqual([])
    expect(fixture.grants).toEqual(['authorization_code'])
    // Used once: the same way back is refused.
    expect((await fetch(back)).status).toBe(400)
  })

  it('refuses an authorization code mount that has no sign-in, its own or a host’s', () => {
    expect(() => new McpToolService({ id: 'bare', transport: { url: 'http://127.0.0.1:1/mcp' }, auth: { grant: 'authorization_code' } })).toThrow(/redirectUrl and a signIn/)
  })
})

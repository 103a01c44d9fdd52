import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OAuthFixture, startOAuthFixture } from '../src/mcp/fixtures/oauth-server.js'
import { until } from '../src/mcp/fixtures/serve-plugin.js'
import { consoleOnDev, type DevConsole, SHOTS } from './browser.js'

/** The README's mount, with `auth: { grant: 'authorization_code' }` and nothing else: seam dev's console signs in. */
const PLUGIN = `
import { capabilitySeamToken, definePlugin, McpToolService, SeamIntegration } from 'seam-runtime'
export default definePlugin({
  name: 'app',
  setup({ resources, effect }) {
    const seams = new SeamIntegration()
    const docs = new McpToolService({
      id: 'docs',
      prefix: 'docs',
      approval: 'never',
      protocol: '2025-11-25',
      transport: { url: process.env.SEAM_TEST_PROTECTED_URL },
      reconnect: { initialDelayMs: 100, maxDelayMs: 300 },
      auth: { grant: 'authorization_code' },
    })
    effect(() => docs.dispose(), 'mcp docs')
    seams.registerToolService('global', docs)
    resources.provide(capabilitySeamToken, seams, () => seams.dispose())
  },
})
`

describe('signing a mounted server in through the console of seam dev, in a real browser', () => {
  let fixture: OAuthFixture
  let dev: DevConsole
  let base: string
  let page: Page

  beforeAll(async () => {
    fixture = await startOAuthFixture()
    dev = await consoleOnDev({ files: { 'plugin.ts': PLUGIN }, alone: true, env: { SEAM_TEST_PROTECTED_URL: fixture.url } })
    base = dev.base
    page = dev.page
  }, 60_000)

  afterAll(async () => {
    await dev?.close()
    await fixture?.close()
  })

  const run = (tool: string, args: unknown) =>
    page.evaluate(
      async ({ tool, args }) => {
        const answer = await fetch('/api/try', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tool, arguments: JSON.stringify(args), subjectId: 'dev' }) })
        return (await answer.json()) as { outcome: { status: string; content: { text?: string }[] } }
      },
      { tool, args },
    )

  it('lists the sign-in, follows the authorization server back to /oauth/callback, answers without a second sign-in, and parks a call on a fresh one once the tokens are revoked', async () => {
    await page.goto(`${base}#/sign-ins`)
    const card = page.locator('ol.sign-ins li.card')
    await card.waitFor({ timeout: 15_000 })
    expect(await card.locator('h3').textContent()).toBe('docs needs you to sign in')
    await until('the nav count', async () => (await page.locator('nav a[data-section="sign-ins"] .count').textContent()) === '1')
    await page.screenshot({ path: path.join(SHOTS, 'sign-in-waiting.png') })

    // The link opens the authorization server in a new tab; the person allows, and is sent back.
    const [tab] = await Promise.all([dev.browser.waitForEvent('page'), card.getByRole('link', { name: 'Sign in' }).click()])
    await tab.waitForLoadState()
    expect(new URL(tab.url()).origin).toBe(new URL(fixture.url).origin)
    await tab.getByRole('link', { name: 'Allow seam-runtime' }).click()
    await tab.waitForURL(/\/oauth\/callback\?/)
    expect(new URL(tab.url()).origin).toBe(new URL(base).origin)
    expect(await tab.locator('h1').textContent()).toBe('Signed in to docs')
    expect(await tab.locator('body').textContent()).toContain('You can close this tab')
    const code = new URL(tab.url()).searchParams.get('code')!
    expect(await tab.content()).not.toContain(code)
    await tab.screenshot({ path: path.join(SHOTS, 'sign-in-callback.png') })

    // The entry leaves the page, live.
    await page.locator('ol.sign-ins li.empty').waitFor({ timeout: 5_000 })
    await until('the nav count cleared', async () => (await page.locator('nav a[data-section="sign-ins"] .count').textContent()) === '')

    // Connected with the token: its tools reach the catalog, and calls answer.
    await until('the docs tools in the catalog', () => run('docs__echo', { text: 'probe' }).then((r) => r.outcome.status === 'completed'), 15_000)
    const first = await run('docs__echo', { text: 'signed in through the console' })
    expect(first.outcome).toMatchObject({ status: 'completed', content: [{ text: 'echo: signed in through the console' }] })
    const second = await run('docs__echo', { text: 'again' })
    expect(second.outcome).toMatchObject({ status: 'completed', content: [{ text: 'echo: again' }] })
    expect(fixture.grants).toEqual(['authorization_code'])
    expect(await page.locator('ol.sign-ins li.card').count()).toBe(0)

    // Revoked at the server: the next call parks on a fresh sign-in, listed live; signing in lets it finish.
    fixture.revokeTokens()
    const parked = run('docs__echo', { text: 'after revocation' })
    const again = page.locator('ol.sign-ins li.card')
    await again.waitFor({ timeout: 15_000 })
    const [retab] = await Promise.all([dev.browser.waitForEvent('page'), again.getByRole('link', { name: 'Sign in' }).click()])
    await retab.waitForLoadState()
    await retab.getByRole('link', { name: 'Allow seam-runtime' }).click()
    await retab.waitForURL(/\/oauth\/callback\?/)
    expect(await retab.locator('h1').textContent()).toBe('Signed in to docs')
    expect((await parked).outcome).toMatchObject({ status: 'completed', content: [{ text: 'echo: after revocation' }] })
    await page.locator('ol.sign-ins li.empty').waitFor({ timeout: 5_000 })
    expect(fixture.grants.filter((grant) => grant === 'authorization_code')).toHaveLength(2)
    expect((await run('docs__echo', { text: 'reused' })).outcome).toMatchObject({ status: 'completed' })
    expect(fixture.grants.filter((grant) => grant === 'authorization_code')).toHaveLength(2)

    // The way back works once: the same callback again is refused with a clear page.
    const reused = await tab.goto(tab.url())
    expect(reused?.status()).toBe(400)
    expect(await tab.locator('h1').textContent()).toBe('Sign-in not recognised')
    await page.screenshot({ path: path.join(SHOTS, 'sign-in-done.png') })

    // The terminal said where to sign in, once per sign-in.
    expect(dev.output.match(/sign in docs waits for you to sign in: http:\/\/127\.0\.0\.1:\d+\/#\/sign-ins/g)).toHaveLength(2)
    // Nothing secret reached seam dev's output.
    for (const secret of [code, ...fixture.issued]) expect(dev.output).not.toContain(secret)
    expect(dev.output).not.toContain('page error')
  }, 60_000)
})

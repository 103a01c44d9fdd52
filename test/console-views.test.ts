import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { everythingTransport } from '../src/mcp/fixtures/test-helpers.js'
import { resolveLimits } from '../src/runtime/pipeline/limits.js'
import { consoleOnDev, type DevConsole, SHOTS } from './browser.js'
import { BIN } from './cli-kit.js'

/** The root plugin mounts the reference "everything" server, its tools listed as `ev__<name>`. */
const PLUGIN = `
import { definePlugin } from 'seam-runtime/plugin-runtime'
import { capabilitySeamToken, McpToolService, SeamIntegration } from 'seam-runtime'
export default definePlugin({
  name: 'views',
  setup({ resources, effect }) {
    const seams = new SeamIntegration()
    const everything = new McpToolService({ id: 'everything', prefix: 'ev', transport: ${JSON.stringify(everythingTransport())} })
    effect(() => everything.dispose(), 'mcp everything')
    seams.registerToolService('global', everything)
    seams.registerResourceService('global', everything)
    resources.provide(capabilitySeamToken, seams, () => seams.dispose())
  },
})
`
const BROKEN = 'export default defineTool({ description: "x", input: ,\n})\n'

describe('the console views a newcomer reads first, in a real browser', () => {
  let dev: DevConsole
  let base: string
  let page: Page
  /** Every response of 400 or more the page received (its own assets included). */
  const failures: string[] = []

  beforeAll(async () => {
    dev = await consoleOnDev({ files: { 'plugin.ts': PLUGIN } })
    base = dev.base
    page = dev.page
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().includes('/api/turns/')) failures.push(`${response.status()} ${response.url()}`)
    })
  }, 60_000)

  afterAll(async () => {
    await dev?.close()
  })

  const open = async (hash: string) => {
    await page.goto(`${base}${hash}`)
    await page.locator('main h1').waitFor()
  }
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage: true })
  const seamCall = async (tool: string, args: string) => {
    // A denied call exits non-zero; its output names the turn all the same.
    const run = promisify(execFile)(process.execPath, [BIN, 'call', tool, args, '--dir', dev.dir], { env: { ...process.env, NO_COLOR: '1' } })
    const { stdout, stderr } = await run.catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }))
    // The running `seam dev` makes the call: in its generation and journal, asking on this page.
    expect(stderr).toMatch(/^via seam dev at http:\/\/127\.0\.0\.1:\d+, generation \d+/)
    return /turn ([0-9a-f]{8})/.exec(stdout)?.[1]
  }

  it("counts a mounted server's tools beside it, as many as the catalog lists from it", async () => {
    const catalog = (await (await fetch(new URL('api/catalog', base))).json()) as { tools: { name: string; source: string }[] }
    const mounted = catalog.tools.filter((tool) => tool.source === 'mcp:everything').length
    expect(mounted).toBeGreaterThan(3)
    await open('#/generations')
    await page.getByText(`${mounted} tools`).waitFor({ timeout: 5_000 })
    expect(await page.locator('section[aria-labelledby="providers-title"] li').textContent()).toContain(`everything ${mounted} tools`)
    await shot('providers')
  })

  it('shows the root default where a tool sets no timeout of its own', async () => {
    await open('#/catalog')
    const lookup = page.locator('#tool-lookup')
    await lookup.waitFor()
    expect(await lookup.locator('dd', { hasText: ' ms' }).first().textContent()).toBe(`${resolveLimits(undefined).timeoutMs} ms (the root default)`)
  })

  it("lists the mounted server's resources and templates in the catalog", async () => {
    await open('#/catalog')
    const heading = page.getByRole('heading', { name: /^Resources \(\d+\)$/ })
    await heading.waitFor({ timeout: 5_000 })
    const count = Number(/\((\d+)\)/.exec((await heading.textContent()) ?? '')?.[1])
    expect(count).toBeGreaterThan(1)
    const template = page.locator('article[aria-label="resource demo://resource/dynamic/text/{resourceId}"]')
    expect(await template.textContent()).toContain('template')
    expect(await template.textContent()).toContain('seam:everything')
    await heading.scrollIntoViewIfNeeded()
    await shot('catalog-resources')
  })

  it("lists each turn's tools and outcomes, and opens a turn by the short id it shows", { timeout: 90_000 }, async () => {
    const completed = await seamCall('lookup', '{"id":1}')
    // A `seam call` through `seam dev` asks on the open console page: rejected there.
    await open('#/approvals')
    const asked = seamCall('wipe', '{"id":2}')
    const question = page.locator('ol.approvals li[data-id]')
    await question.waitFor({ timeout: 10_000 })
    expect(await question.textContent()).toContain('wipe')
    await question.getByRole('button', { name: 'Reject' }).click()
    const denied = await asked
    expect(completed).toBeDefined()
    expect(denied).toBeDefined()
    await open('#/journal')
    const row = (turn: string) => page.locator(`tr[data-turn^="${turn}"]`)
    await row(denied!).waitFor({ timeout: 10_000 })
    expect(await row(completed!).locator('td.tools').textContent()).toBe('lookup')
    expect(await row(completed!).locator('td.outcome').textContent()).toBe('1 completed')
    expect(await row(denied!).locator('td.tools').textContent()).toBe('wipe')
    expect(await row(denied!).locator('td.outcome').textContent()).toBe('1 denied')
    await shot('journal-columns')

    await open(`#/journal/${completed}`)
    const detail = page.locator('.detail')
    await detail.locator('.call', { hasText: 'lookup' }).waitFor({ timeout: 5_000 })
    // The address now names the whole id, which is the one the heading shows.
    const full = decodeURIComponent(new URL(page.url()).hash.slice('#/journal/'.length))
    expect(full.startsWith(completed!)).toBe(true)
    expect(full.length).toBeGreaterThan(completed!.length)
    expect(await detail.locator('h2 code').textContent()).toBe(full)

    await open('#/journal/nosuchturn')
    await detail.getByText(/no turn "nosuchturn" in this journal/).waitFor({ timeout: 5_000 })
    expect(await detail.getByText('no calls').count()).toBe(0)
  })

  it("shows a broken file's relative path and frame once, however many places mention it", async () => {
    await open('#/generations')
    await dev.put('tools/broken.ts', BROKEN)
    await page.locator('.problems pre.frame').waitFor({ timeout: 10_000 })
    await shot('broken-once')
    expect(await page.locator('pre.frame').count()).toBe(1)
    const text = (await page.locator('main').textContent()) ?? ''
    expect(text).not.toContain(dev.dir)
    expect(text.match(/tools\/broken\.ts:1:54/g)).toHaveLength(1)
    await expect(page.locator('.timeline .entry.failed').first().textContent()).resolves.toContain('(details above)')
  })

  it('answers every asset the page asks for, the icon included', async () => {
    for (const hash of ['#/generations', '#/catalog', '#/journal', '#/approvals']) await open(hash)
    expect(failures).toEqual([])
    const icon = await fetch(new URL('favicon.ico', base))
    expect(icon.status).toBe(200)
    expect(icon.headers.get('content-type')).toBe('image/svg+xml')
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe('/favicon.svg')
  })
})

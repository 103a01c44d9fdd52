import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consoleOnDev, type DevConsole, SHOTS } from './browser.js'

/** Ten steps of 400 ms, each reported: a call that runs for four seconds. */
const CRAWL = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Crawl a site slowly, reporting each page.',
  input: z.object({ site: z.string() }),
  approval: 'never',
  async execute({ site }, ctx) {
    for (let done = 1; done <= 10; done++) {
      await new Promise((resolve) => setTimeout(resolve, 400))
      ctx.progress({ done, total: 10, message: site + '/page-' + done })
    }
    return 'crawled ' + site
  },
})
`

describe('a running call’s progress in the console, in a real browser on seam dev', () => {
  let dev: DevConsole
  let base: string
  let mcp: Client
  let page: Page

  beforeAll(async () => {
    dev = await consoleOnDev({ files: { 'tools/crawl.ts': CRAWL } })
    base = dev.base
    page = dev.page
    mcp = new Client({ name: 'console-progress-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL('mcp', base)))
  }, 60_000)

  afterAll(async () => {
    await mcp?.close().catch(() => {})
    await dev?.close()
  })

  // The call begins as soon as the page is up, inside the stream's first look at the journal: the
  // page reloads when its stream opens, and the stream opens only once that look is done.
  it('draws a live bar on the running call that moves with each report, and drops it when the call settles', async () => {
    await page.goto(`${base}#/journal`)
    await page.locator('main h1').waitFor()
    const call = mcp.callTool({ name: 'crawl', arguments: { site: 'docs.example' } })
    // The call's turn appears in the live list; open it while the call runs.
    await page.locator('button[aria-label^="show turn"]').first().click({ timeout: 5_000 })
    const running = page.locator('li.call', { hasText: 'crawl' })
    const bar = running.locator('.progress progress')
    await bar.waitFor({ timeout: 3_000 })
    const first = Number(await bar.getAttribute('value'))
    expect(await bar.getAttribute('max')).toBe('10')
    await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 3_000 }).toBeGreaterThan(first)
    await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 3_000 }).toBeGreaterThanOrEqual(5)
    const label = await running.locator('.progress span').textContent()
    expect(label).toMatch(/^\d+ of 10 \(\d+ %\) · docs\.example\/page-\d+$/)
    await running.locator('.progress').screenshot({ path: path.join(SHOTS, 'console-progress-bar.png') })
    await page.screenshot({ path: path.join(SHOTS, 'console-progress.png'), fullPage: true })
    const result = await call
    expect((result.content as { text: string }[])[0]!.text).toBe('crawled docs.example')
    // Settled: the journal's result replaces the bar.
    await running.locator('.badge', { hasText: 'completed' }).waitFor({ timeout: 3_000 })
    expect(await running.locator('.progress').count()).toBe(0)
    expect(dev.output).not.toMatch(/page error/)
  })

  it('shows the last report to a page opened while the call runs', async () => {
    const call = mcp.callTool({ name: 'crawl', arguments: { site: 'late.example' } })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    await page.goto(`${base}#/journal`)
    await page.locator('main h1').waitFor()
    await page.locator('button[aria-label^="show turn"]').first().click()
    const running = page.locator('li.call', { hasText: 'late.example' }).filter({ hasNot: page.locator('.badge', { hasText: 'completed' }) })
    const bar = running.locator('.progress progress')
    await bar.waitFor({ timeout: 2_000 })
    expect(Number(await bar.getAttribute('value'))).toBeGreaterThanOrEqual(2)
    await call
  })

  it('shows a call from a 2026-07-28 client running, its bar moving, in the page already open', async () => {
    const modern = new Client({ name: 'console-progress-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
    await modern.connect(new StreamableHTTPClientTransport(new URL('mcp', base)))
    try {
      expect(modern.getProtocolEra()).toBe('modern')
      await page.goto(`${base}#/journal`)
      await page.locator('main h1').waitFor()
      const call = modern.callTool({ name: 'crawl', arguments: { site: 'modern.example' } })
      // Its own turn, with the call open (the earlier session's turn is running too).
      const open = page.locator('tr', { has: page.locator('.badge', { hasText: '1 open' }) })
      await open.locator('button[aria-label^="show turn"]').click({ timeout: 5_000 })
      const running = page.locator('li.call', { hasText: 'modern.example' })
      const bar = running.locator('.progress progress')
      await bar.waitFor({ timeout: 3_000 })
      const first = Number(await bar.getAttribute('value'))
      await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 3_000 }).toBeGreaterThan(first)
      await page.locator('.wf-lane', { hasText: 'crawl' }).locator('.wf-fill').waitFor({ timeout: 2_000 })
      await call
      await running.locator('.badge', { hasText: 'completed' }).waitFor({ timeout: 3_000 })
    } finally {
      await modern.close()
    }
  })
})

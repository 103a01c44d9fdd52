import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoot, sqliteJournal } from 'seam-runtime'
import { journalPath } from '../src/cli/workspace.js'
import { consoleOnDev, type DevConsole, SHOTS } from './browser.js'

/** Sleeps `ms`; safe to run beside others, so a batch runs its calls in parallel. */
const SLOW = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Wait a while, then say so.',
  input: z.object({ ms: z.number().int(), label: z.string() }),
  approval: 'never',
  isConcurrencySafe: () => true,
  async execute({ ms, label }, ctx) {
    // A report every 200 ms: the console fills the running bar with it.
    const steps = Math.max(1, Math.floor(ms / 200))
    for (let done = 1; done <= steps; done++) {
      await new Promise((resolve) => setTimeout(resolve, ms / steps))
      ctx.progress({ done, total: steps, message: label + ' step ' + done })
    }
    return label + ' done after ' + ms + ' ms'
  },
  render: (_args, value) => value,
})
`
/** \`on-risk\` without a risk: asks every call. */
const TAG = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Put a label on a ticket.',
  input: z.object({ id: z.number().int(), label: z.string() }),
  async execute({ id, label }) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    return 'ticket ' + id + ' labelled ' + label
  },
  render: (_args, value) => value,
})
`

/** A duration as the page writes it (`850 ms`, `1.25 s`), in milliseconds. */
function millis(text: string): number {
  const [, value, unit] = /^([\d.]+) (ms|s)$/.exec(text) ?? []
  if (value === undefined) throw new Error(`not a duration: ${text}`)
  return Number(value) * (unit === 's' ? 1_000 : 1)
}

/** Asks which colour, halfway through its work. */
const PAINT = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Paint a fence, asking the colour.',
  input: z.object({}),
  approval: 'never',
  async execute(_args, ctx) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    const answer = await ctx.ask({ message: 'Which colour?', schema: { type: 'object', properties: { colour: { type: 'string', enum: ['red', 'green'] } }, required: ['colour'] } })
    await new Promise((resolve) => setTimeout(resolve, 100))
    return answer.action === 'accept' ? 'painted ' + answer.content.colour : 'left bare'
  },
  render: (_args, value) => value,
})
`

/**
 * The left and right edges of an element, in CSS pixels. The live page may redraw the waterfall
 * between finding an element and measuring it (its node is then replaced): measured again, for up
 * to 5 s, until it is laid out.
 */
async function edges(locator: Locator): Promise<{ left: number; right: number; width: number }> {
  const until = Date.now() + 5_000
  for (;;) {
    await locator.waitFor({ state: 'visible', timeout: 5_000 })
    const box = await locator.boundingBox()
    if (box !== null) return { left: box.x, right: box.x + box.width, width: box.width }
    if (Date.now() > until) throw new Error('not laid out')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('the turn waterfall in a real browser, on seam dev', () => {
  let dev: DevConsole
  let base: string
  let mcp: Client
  let page: Page

  beforeAll(async () => {
    dev = await consoleOnDev({ files: { 'tools/slow.ts': SLOW, 'tools/tag.ts': TAG, 'tools/paint.ts': PAINT } })
    base = dev.base
    page = dev.page
    mcp = new Client({ name: 'console-waterfall-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL('mcp', base)))
  }, 60_000)

  afterAll(async () => {
    await mcp?.close().catch(() => {})
    await dev?.close()
  })

  it('draws parallel calls as overlapping bars, an approval stretch, and a Code Mode run with its sub-calls indented under it', { timeout: 60_000 }, async () => {
    // Another process on the same journal (as `seam call` is): its approvals answered after 400 ms.
    const runner = await createRoot({
      dir: dev.dir,
      journal: sqliteJournal(journalPath(dev.dir)),
      codeMode: true,
      approval: { request: () => new Promise((resolve) => setTimeout(() => resolve('allowed-once'), 400)) },
    })
    let turnId = ''
    try {
      // Its questions answered after 300 ms, as a person would.
      const question = { elicit: () => new Promise<{ action: 'accept'; content: { colour: string } }>((resolve) => setTimeout(() => resolve({ action: 'accept', content: { colour: 'green' } }), 300)) }
      const turn = await runner.beginTurn({ session: 'waterfall', principal: { subjectId: 'ann', roles: [] }, ports: { question } })
      turnId = turn.turnId
      const outcomes = await turn.tools.executeBatch([
        { callId: 'a', name: 'slow', arguments: { ms: 700, label: 'a' } },
        { callId: 'b', name: 'slow', arguments: { ms: 500, label: 'b' } },
        { callId: 't', name: 'tag', arguments: { id: 7, label: 'urgent' } },
        { callId: 'p', name: 'paint', arguments: {} },
      ])
      expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed', 'completed', 'completed'])
      expect(outcomes[3]!.content).toEqual([{ type: 'text', text: 'painted green' }])
      const code = 'const one = await tools.slow({ ms: 150, label: "one" })\nconst two = await tools.slow({ ms: 250, label: "two" })\nreturn [one, two]'
      expect((await turn.tools.execute({ callId: 'r1', name: 'run_code', arguments: { code } })).status).toBe('completed')
      await turn.end()
    } finally {
      await runner.close()
    }

    for (const width of [1280, 800]) {
      await page.setViewportSize({ width, height: 900 })
      await page.goto(`${base}#/journal/${turnId}`)
      const lane = (callId: string) => page.locator(`.waterfall li.wf-lane[data-call="${callId}"]`)
      await lane('r1/2').waitFor({ timeout: 10_000 })
      // Model order, the sub-calls right under their run, indented one level.
      await expect(page.locator('.waterfall li.wf-lane').evaluateAll((items) => items.map((item) => [item.getAttribute('data-call'), item.getAttribute('data-depth')]))).resolves.toEqual([
        ['a', '0'],
        ['b', '0'],
        ['t', '0'],
        ['p', '0'],
        ['r1', '0'],
        ['r1/1', '1'],
        ['r1/2', '1'],
      ])
      const indent = async (callId: string) => (await edges(lane(callId).locator('.wf-who button'))).left
      expect(await indent('r1/1')).toBeGreaterThan((await indent('r1')) + 10)

      // a and b ran at once: their bodies overlap on the axis; tag (exclusive) ran after both.
      const a = await edges(lane('a').locator('.wf-seg.body'))
      const b = await edges(lane('b').locator('.wf-seg.body'))
      expect(Math.min(a.right, b.right) - Math.max(a.left, b.left)).toBeGreaterThan(b.width / 2)
      expect(a.width).toBeGreaterThan(b.width)
      const approval = lane('t').locator('.wf-seg.approval')
      const tagBody = await edges(lane('t').locator('.wf-seg.body'))
      expect(tagBody.left).toBeGreaterThanOrEqual(a.right - 2)
      expect((await edges(approval)).width).toBeGreaterThan(20)
      expect(await approval.getAttribute('title')).toMatch(/^approval (\d{3}) ms \(allowed-once\)$/)
      expect(Number(/approval (\d+)/.exec((await approval.getAttribute('title'))!)![1])).toBeGreaterThanOrEqual(380)
      // The question sits on the paint call's bar, inside its body, from asked to answered.
      const asked = lane('p').locator('.wf-q.accept')
      expect(await asked.getAttribute('title')).toMatch(/^question: Which colour\? → accept \{"colour":"green"\} after (\d{3}) ms$/)
      const paintBody = await edges(lane('p').locator('.wf-seg.body'))
      const mark = await edges(asked)
      expect(mark.left).toBeGreaterThan(paintBody.left)
      expect(mark.right).toBeLessThanOrEqual(paintBody.right + 1)
      // Each bar says its durations in words: its accessible name and its tooltip (a stretch that
      // took no time, as a commit within the body's last millisecond, is left out).
      const label = await lane('a').locator('.wf-track').getAttribute('aria-label')
      expect(label).toMatch(/^slow: completed, \d+ ms; (waited [\d.]+ ms, )?body (\d+) ms(, commit [\d.]+ ms)?$/)
      expect(Number(/body (\d+) ms/.exec(label!)![1])).toBeGreaterThanOrEqual(690)
      await expect(lane('r1').locator('.wf-track').getAttribute('aria-label')).resolves.toMatch(/^run_code: completed, /)
      await expect(lane('r1/1').locator('.wf-track').getAttribute('aria-label')).resolves.toMatch(/^slow \(nested, level 1\): completed, /)
      // The sub-calls ran one after the other inside their run's body.
      const run = await edges(lane('r1').locator('.wf-seg.body'))
      const one = await edges(lane('r1/1').locator('.wf-seg.body'))
      const two = await edges(lane('r1/2').locator('.wf-seg.body'))
      expect(one.left).toBeGreaterThanOrEqual(run.left - 1)
      expect(two.left).toBeGreaterThanOrEqual(one.right - 1)
      expect(two.right).toBeLessThanOrEqual(run.right + 1)
      // Nothing spills sideways at this width.
      expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
      // A lane's name jumps to the call's details below (the tree of the run stays there too).
      await lane('r1/2').locator('.wf-who button').click()
      await expect(page.locator(":focus").getAttribute("data-call")).resolves.toBe('r1/2')
      await page.locator('.waterfall').screenshot({ path: path.join(SHOTS, `console-waterfall-${width}.png`) })
    }
    expect(dev.output).not.toMatch(/page error/)
  })

  it('shows a long call while it runs: its bar grows live, then closes with its result', { timeout: 30_000 }, async () => {
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(`${base}#/journal`)
    await page.locator('main h1').waitFor()
    const call = mcp.callTool({ name: 'slow', arguments: { ms: 3_000, label: 'long' } })
    await page.locator('tr', { hasText: '1 open' }).locator('button[aria-label^="show turn"]').first().click({ timeout: 5_000 })
    const lane = page.locator('.waterfall li.wf-lane').first()
    const open = lane.locator('.wf-seg.open')
    await open.waitFor({ timeout: 3_000 })
    await expect(lane.locator('.wf-total').textContent()).resolves.toMatch(/^running /)
    const first = millis(/running (.+) so far/.exec((await open.getAttribute('title'))!)![1]!)
    const wide = (await edges(open)).width
    await page.waitForTimeout(800)
    const later = millis(/running (.+) so far/.exec((await open.getAttribute('title'))!)![1]!)
    expect(later).toBeGreaterThan(first + 400)
    // Its progress fills the open stretch, and is said in its tooltip.
    const fill = open.locator('.wf-fill')
    await fill.waitFor({ timeout: 3_000 })
    const filled = async () => (await edges(fill)).width / (await edges(open)).width
    const share = await filled()
    expect(share).toBeGreaterThan(0)
    await expect.poll(filled, { timeout: 3_000 }).toBeGreaterThan(share + 0.05)
    expect(await open.getAttribute('title')).toMatch(/, progress \d+ of 15 \(\d+ %\) · long step \d+$/)
    // The axis grows with it: the bar stays as wide as the track while it is the only call.
    expect((await edges(open)).width).toBeGreaterThanOrEqual(wide - 2)
    await page.locator('.waterfall').screenshot({ path: path.join(SHOTS, 'console-waterfall-running.png') })
    await call
    // Settled: the journal's result closes the bar into its stretches.
    await lane.locator('.wf-seg.body').waitFor({ timeout: 3_000 })
    expect(await lane.locator('.wf-seg.open').count()).toBe(0)
    const label = await lane.locator('.wf-track').getAttribute('aria-label')
    expect(Number(/body ([\d.]+) s/.exec(label!)?.[1])).toBeGreaterThanOrEqual(2.99)
    expect(dev.output).not.toMatch(/page error/)
  })
})

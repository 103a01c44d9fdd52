import { execFile } from 'node:child_process'
import { request } from 'node:http'
import path from 'node:path'
import { promisify } from 'node:util'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { Locator, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoot, deferApprovals, sqliteJournal } from 'seam-runtime'
import { journalPath } from '../src/cli/workspace.js'
import { consoleOnDev, type DevConsole, SHOTS } from './browser.js'
import { BIN } from './cli-kit.js'

const ECHO = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Say the text back.',
  input: z.object({ text: z.string().describe('What to say'), loud: z.boolean().optional() }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute({ text, loud }) {
    return loud ? text.toUpperCase() : text
  },
  render: (_args, value) => value,
})
`
const XSS = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Return hostile markup.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute() {
    return '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
  },
  render: (_args, value) => value,
})
`
/** `on-risk` without a risk: asks every call, offering all three answers. */
const TAG = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Put a label on a ticket.',
  input: z.object({ id: z.number().int(), label: z.string() }),
  async execute({ id, label }) {
    return \`ticket \${id} labelled \${label}\`
  },
  render: (_args, value) => value,
})
`

describe('the seam console in a real browser, on seam dev', () => {
  let dev: DevConsole
  let base: string
  let mcp: Client
  let page: Page

  beforeAll(async () => {
    dev = await consoleOnDev({ files: { 'tools/echo.ts': ECHO, 'tools/xss.ts': XSS, 'tools/tag.ts': TAG } })
    base = dev.base
    page = dev.page
    mcp = new Client({ name: 'console-browser-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL('mcp', base)))
  }, 60_000)

  afterAll(async () => {
    await mcp?.close().catch(() => {})
    await dev?.close()
  })

  const open = async (hash: string) => {
    await page.goto(`${base}${hash}`)
    await page.locator('main h1').waitFor()
  }
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage: true })
  /** The question about `tool` in `within` (the live list, or the parked calls). */
  const questionIn = (within: Locator) => (tool: string) => within.locator('li[data-id]').filter({ has: page.locator('h3', { hasText: new RegExp(`^${tool}$`) }) })
  /** The answers a question draws, as button labels. */
  const offered = (question: Locator) => question.getByRole('button').allTextContents()
  /** Records the bodies the page POSTs to URLs containing `route` until `stop()`. */
  const posts = (route: string) => {
    const sent: (string | null)[] = []
    const record = (request: Request) => {
      if (request.method() === 'POST' && request.url().includes(route)) sent.push(request.postData())
    }
    page.on('request', record)
    return { sent, stop: () => page.off('request', record) }
  }

  it('shows a reload in the generations timeline within a second', async () => {
    await open('#/generations')
    await page.getByText('generation 1', { exact: true }).waitFor()
    const written = Date.now()
    await dev.put('tools/echo.ts', ECHO.replace('Say the text back.', 'Say the text back, unchanged.'))
    await page.getByText('generation 2', { exact: true }).waitFor({ timeout: 1_000 })
    expect(Date.now() - written).toBeLessThan(1_000)
    await expect(page.locator('.timeline .entry').first().textContent()).resolves.toContain('echo')
    await shot('generations')
  })

  it("shows a broken tool's file, line and code frame, and clears it once the file is fixed", async () => {
    await open('#/generations')
    await dev.put('tools/lookup.ts', 'export default defineTool({ description: "x", input: ,\n})\n')
    const problem = page.locator('.problems')
    await problem.locator('pre.frame').waitFor({ timeout: 5_000 })
    expect(await problem.textContent()).toMatch(/tools\/lookup\.ts:\d+/)
    await shot('reload-failed')
    await dev.put('tools/lookup.ts', (await import('../src/mcp/fixtures/serve-plugin.js')).TOOLS.lookup)
    await problem.waitFor({ state: 'hidden', timeout: 5_000 })
    // The broken file may have been seen twice (two failed reloads, when its writes fell into two
    // debounce windows): every failure is marked fixed once a generation publishes.
    await page.locator('.timeline .entry.failed.resolved').first().waitFor()
    expect(await page.locator('.timeline .entry.failed:not(.resolved)').count()).toBe(0)
    expect(await page.getByText('fixed since').count()).toBe(await page.locator('.timeline .entry.failed').count())
  })

  it('lists the live catalog with approval modes in words and skill instructions as text', async () => {
    await open('#/catalog')
    const wipe = page.locator('#tool-wipe')
    await wipe.waitFor()
    expect(await wipe.textContent()).toContain('asks every call')
    await page.getByText('instructions', { exact: true }).click()
    await page.locator('.markdown h3', { hasText: 'Triage' }).waitFor()
    await shot('catalog')
  })

  it('shows a call from `seam call` and one from an MCP client in the journal as they happen', async () => {
    await open('#/journal')
    await page.locator('table.turns tbody tr').first().waitFor()
    await promisify(execFile)(process.execPath, [BIN, 'call', 'echo', '{"text":"from the cli"}', '--dir', dev.dir, '--session', 'cli-session'])
    await page.locator('tr', { hasText: 'cli-session' }).waitFor({ timeout: 10_000 })
    await mcp.callTool({ name: 'echo', arguments: { text: 'from mcp' } })
    const row = page.locator('tr', { hasText: /mcp:/ }).first()
    await row.waitFor({ timeout: 10_000 })
    await row.getByRole('button').click()
    await page.locator('.detail .call', { hasText: 'from mcp' }).first().waitFor()
    await shot('journal')
  })

  it('unblocks a call when its approval is allowed in the browser, and denies it when rejected', async () => {
    await open('#/approvals')
    const allowed = mcp.callTool({ name: 'wipe', arguments: { id: 7 } })
    const question = page.locator('ol.approvals li[data-id]')
    await question.waitFor({ timeout: 10_000 })
    expect(await question.textContent()).toContain('wipe')
    await shot('approvals')
    await question.getByRole('button', { name: 'Allow once' }).click()
    const result = await allowed
    expect(result.isError).toBeFalsy()
    expect(JSON.stringify(result.content)).toContain('wiped ticket 7')

    const rejected = mcp.callTool({ name: 'wipe', arguments: { id: 8 } })
    await question.waitFor({ timeout: 10_000 })
    // Keyboard only: the question takes focus, and r rejects it.
    await question.focus()
    await page.keyboard.press('r')
    const denied = await rejected
    expect(denied.isError).toBe(true)
    expect(JSON.stringify(denied.content)).toContain('DENIED')
    await page.getByText('Nothing is waiting for approval.').waitFor()
  })

  it('keeps a question that arrives while an older list of questions is still on its way', async () => {
    // The page asks for the queue when the view opens and hears of new questions on its event
    // stream; the two travel on different connections. Hold the answer to the first ask back
    // until the question has been pushed: the older (empty) list must not wipe it off the page.
    let releaseList!: () => void
    const listHeld = new Promise<void>((resolve) => {
      releaseList = resolve
    })
    let delivered = 0
    await page.route(
      '**/api/approvals',
      async (route) => {
        const response = await route.fetch()
        await listHeld
        await route.fulfill({ response })
        delivered++
      },
      { times: 1 },
    )
    try {
      await open('#/journal')
      await page.goto(`${base}#/approvals`)
      await page.locator('main h1', { hasText: 'Approvals' }).waitFor()
      const asked = mcp.callTool({ name: 'wipe', arguments: { id: 9 } })
      const question = page.locator('ol.approvals li[data-id]')
      await question.waitFor({ timeout: 10_000 })
      releaseList()
      await expect.poll(() => delivered).toBeGreaterThan(0)
      await page.waitForTimeout(200)
      expect(await question.count()).toBe(1)
      await question.getByRole('button', { name: 'Reject' }).click()
      expect((await asked).isError).toBe(true)
    } finally {
      releaseList()
      await page.unrouteAll({ behavior: 'wait' })
    }
  })

  it('offers on each question only the answers its call offers, as buttons and as keys', async () => {
    await open('#/approvals')
    const question = questionIn(page.locator('ol.approvals'))
    const wiping = mcp.callTool({ name: 'wipe', arguments: { id: 10 } })
    await question('wipe').waitFor({ timeout: 10_000 })
    const tagging = mcp.callTool({ name: 'tag', arguments: { id: 10, label: 'urgent' } })
    await question('tag').waitFor({ timeout: 10_000 })
    // `wipe` asks every call (`approval: 'always'`): a grant for the session would never be consulted.
    expect(await offered(question('wipe'))).toEqual(['Allow once', 'Reject'])
    expect(await offered(question('tag'))).toEqual(['Allow once', 'Allow for the session', 'Reject'])
    await shot('approvals-offered')

    // s is not an answer `wipe` offers: the key sends nothing, and r then rejects.
    const answers = posts('/api/approvals/')
    await question('wipe').focus()
    await page.keyboard.press('s')
    await page.keyboard.press('r')
    const wiped = await wiping
    answers.stop()
    expect(wiped.isError).toBe(true)
    expect(JSON.stringify(wiped.content)).toContain('DENIED')
    expect(answers.sent).toEqual(['{"answer":"rejected"}'])

    await question('tag').getByRole('button', { name: 'Allow for the session' }).click()
    expect(JSON.stringify((await tagging).content)).toContain('ticket 10 labelled urgent')
    // The grant holds for this MCP session: the next call runs without a question.
    expect(JSON.stringify((await mcp.callTool({ name: 'tag', arguments: { id: 11, label: 'later' } })).content)).toContain('ticket 11 labelled later')
    await page.getByText('Nothing is waiting for approval.').waitFor()
  })

  it('lists the standing session grants on the approvals view, and revokes one there: the next call asks again', async () => {
    await open('#/approvals')
    // The grant the previous test gave `tag` for the MCP client's session.
    const grant = page.locator('ul.grants li[data-grant]').filter({ has: page.locator('h3', { hasText: /^tag$/ }) })
    await grant.waitFor({ timeout: 10_000 })
    expect(await grant.textContent()).toMatch(/session mcp:[0-9a-f-]{36}/)
    await shot('approvals-grants')
    await grant.getByRole('button', { name: 'Revoke the grant for tag' }).click()
    await grant.waitFor({ state: 'detached', timeout: 10_000 })
    const question = questionIn(page.locator('ol.approvals'))
    const tagging = mcp.callTool({ name: 'tag', arguments: { id: 12, label: 'again' } })
    await question('tag').waitFor({ timeout: 10_000 })
    await question('tag').getByRole('button', { name: 'Allow once' }).click()
    expect(JSON.stringify((await tagging).content)).toContain('ticket 12 labelled again')
  })

  it('offers on each parked call only the answers its question offered, as buttons and as keys', async () => {
    // Another process on the folder's journal parks two calls for a later decision.
    const parker = await createRoot({ dir: dev.dir, journal: sqliteJournal(journalPath(dev.dir)), approval: deferApprovals() })
    try {
      const turn = await parker.beginTurn({ session: 'overnight', principal: { subjectId: 'ann', roles: [] } })
      const wiping = await turn.tools.execute({ callId: 'w1', name: 'wipe', arguments: '{"id":20}' })
      const tagging = await turn.tools.execute({ callId: 't1', name: 'tag', arguments: '{"id":20,"label":"later"}' })
      expect([wiping.status, tagging.status]).toEqual(['suspended', 'suspended'])
      await turn.end()

      await open('#/approvals')
      const parked = page.getByRole('list', { name: 'parked calls, oldest first' })
      const question = questionIn(parked)
      await question('tag').waitFor({ timeout: 10_000 })
      // `wipe` asks every call: a grant for the session would never be consulted, so it was never offered.
      expect(await offered(question('wipe'))).toEqual(['Allow once', 'Reject'])
      expect(await offered(question('tag'))).toEqual(['Allow once', 'Allow for the session', 'Reject'])
      await shot('parked-offered')

      // s is not an answer `wipe` offered: the key sends nothing, and o then allows it once.
      const answers = posts('/api/parked/')
      await question('wipe').focus()
      await page.keyboard.press('s')
      await page.keyboard.press('o')
      await question('wipe').getByText('allowed-once by console').waitFor({ timeout: 10_000 })
      answers.stop()
      expect(answers.sent).toEqual(['{"answer":"allowed-once"}'])
      await question('tag').getByRole('button', { name: 'Allow for the session' }).click()
      await question('tag').getByText('allowed-session by console').waitFor({ timeout: 10_000 })

      // Decided in the browser, each runs when the process that parked it resumes it.
      expect(JSON.stringify((await parker.resume(wiping.resumeToken!, { principal: 'ann' })).content)).toContain('wiped ticket 20')
      expect(JSON.stringify((await parker.resume(tagging.resumeToken!, { principal: 'ann' })).content)).toContain('ticket 20 labelled later')
    } finally {
      await parker.close()
    }
  })

  it('shows a Code Mode run as its program with the tree of its sub-calls', async () => {
    const runner = await createRoot({ dir: dev.dir, journal: sqliteJournal(journalPath(dev.dir)), codeMode: true })
    let turnId = ''
    try {
      const turn = await runner.beginTurn({ session: 'code', principal: { subjectId: 'ann', roles: [] } })
      turnId = turn.turnId
      const code = 'const a = await tools.echo({ text: "one" })\nconst b = await tools.echo({ text: "two" })\nreturn [a, b]'
      const outcome = await turn.tools.execute({ callId: 'r1', name: 'run_code', arguments: { code } })
      expect(outcome.status).toBe('completed')
      await turn.end()
    } finally {
      await runner.close()
    }
    await open(`#/journal/${turnId}`)
    const run = page.locator('li.call[data-call="r1"]')
    await run.waitFor({ timeout: 10_000 })
    await expect(run.locator('pre.code').first().textContent()).resolves.toContain('const b = await tools.echo({ text: "two" })')
    const subs = run.locator('.subcalls li.call')
    await expect(subs.evaluateAll((items) => items.map((item) => item.getAttribute('data-call')))).resolves.toEqual(['r1/1', 'r1/2'])
    await expect(subs.first().textContent()).resolves.toContain('completed')
    // Listed once, under the run: not again beside it.
    expect(await page.locator('ol.calls > li.call[data-call="r1/1"]').count()).toBe(1)
    await shot('code-run')
  })

  it('runs a tool from the form generated from its input schema, journaled as the named principal', async () => {
    await open('#/try/echo')
    await page.getByLabel('text').fill('hello console')
    await page.getByLabel('loud').check()
    await page.getByLabel('run as (principal)').fill('ada')
    await page.getByRole('button', { name: 'Run' }).click()
    const outcome = page.locator('.outcome')
    await outcome.getByText('completed').waitFor()
    expect(await outcome.locator('pre.text').textContent()).toBe('HELLO CONSOLE')
    await shot('try')
    await open('#/journal')
    await page.locator('tr', { hasText: 'ada' }).first().waitFor()
  })

  it('renders hostile markup in tool output as inert text', async () => {
    await open('#/try/xss')
    await page.getByRole('button', { name: 'Run' }).click()
    const text = page.locator('.outcome pre.text')
    await text.waitFor()
    expect(await text.textContent()).toContain('<script>window.__pwned = 1</script>')
    expect(await page.locator('.outcome img, .outcome script').count()).toBe(0)
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined()
  })

  it('refuses requests from a foreign Origin, and state changes without the page Origin', async () => {
    const foreign = await fetch(new URL('api/state', base), { headers: { origin: 'http://evil.example' } })
    expect(foreign.status).toBe(403)
    const post = (origin?: string) =>
      fetch(new URL('api/try', base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(origin ? { origin } : {}) },
        body: JSON.stringify({ tool: 'echo', arguments: '{"text":"x"}', subjectId: 'mallory' }),
      })
    expect((await post('http://evil.example')).status).toBe(403)
    expect((await post()).status).toBe(403)
    // DNS rebinding: a page of attacker.example resolved to 127.0.0.1 sends its own Host (fetch cannot forge one).
    const rebound = await new Promise<number | undefined>((resolve, reject) => {
      const url = new URL('api/state', base)
      request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: `attacker.example:${url.port}` } }, (res) => {
        res.resume()
        resolve(res.statusCode)
      })
        .on('error', reject)
        .end()
    })
    expect(rebound).toBe(403)
    expect(dev.output).not.toContain('page error')
  })
})

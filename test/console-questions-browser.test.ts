import { spawn } from 'node:child_process'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../src/mcp/fixtures/serve-plugin.js'
import { consoleOnDev, type DevConsole, SHOTS } from './browser.js'
import { BIN } from './cli-kit.js'
import { EVERY_SHAPE } from './question-shapes.js'

/** Asks one question with every field kind and returns the answer it got, as JSON text. */
const PROFILE = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Ask for a profile, field by field.',
  input: z.object({}),
  approval: 'never',
  async execute(_args, ctx) {
    const answer = await ctx.ask({ message: 'Fill in your profile', schema: ${JSON.stringify(EVERY_SHAPE)} })
    return JSON.stringify(answer)
  },
})
`

/**
 * `seam dev` at a terminal (a pseudo-terminal from util-linux `script`, so stdin and stdout are
 * TTYs): a tool's question is asked at that terminal and on the console page at once.
 */
describe('a tool’s questions in the console of seam dev at a terminal, in a real browser', () => {
  let dev: DevConsole
  let base: string
  let page: Page

  beforeAll(async () => {
    dev = await consoleOnDev({ files: { 'tools/profile.ts': PROFILE }, terminal: true })
    base = dev.base
    page = dev.page
  }, 60_000)

  afterAll(async () => {
    await dev?.close()
  })

  it('draws the question as a form with every field kind, takes the answer to the tool, and shows it on the call', async () => {
    await page.goto(`${base}#/try/profile`)
    await page.locator('#try-tool option[value="profile"]').waitFor({ state: 'attached' })
    await page.getByRole('button', { name: 'Run' }).click()
    const form = page.locator('form.question')
    await form.waitFor({ timeout: 5_000 })
    // Asked at the terminal too.
    await until('the terminal prompt', () => dev.output.includes('profile asks: Fill in your profile'))

    // Prefilled from the defaults; required fields marked.
    expect(await form.getByLabel('ratio').inputValue()).toBe('0.5')
    expect(await form.getByLabel('subscribe').isChecked()).toBe(true)
    expect(await form.getByRole('checkbox', { name: 'x' }).isChecked()).toBe(true)
    expect(await form.getByLabel('Name').getAttribute('required')).not.toBeNull()
    expect(await form.getByLabel('email').getAttribute('type')).toBe('email')
    expect(await form.getByLabel('age').getAttribute('max')).toBe('150')
    expect(await form.locator('select').nth(1).locator('option').allTextContents()).toEqual(['(none)', 'Europe', 'United States'])

    await form.getByLabel('Name').fill('Ada')
    await form.getByLabel('email').fill('ada@example.com')
    await form.getByLabel('age').fill('36')
    await form.getByLabel('plan').selectOption('pro')
    await form.getByLabel('region').selectOption({ label: 'Europe' })
    await form.getByLabel('legacy').selectOption({ label: 'Option B' })
    await form.getByRole('checkbox', { name: 'y' }).check()
    await form.getByRole('checkbox', { name: 'Green' }).check()
    await page.screenshot({ path: path.join(SHOTS, 'console-question.png'), fullPage: true })
    await form.getByRole('button', { name: 'Answer' }).click()

    const outcome = page.locator('section.outcome')
    await outcome.locator('.badge', { hasText: 'completed' }).waitFor({ timeout: 5_000 })
    const expected = { name: 'Ada', email: 'ada@example.com', age: 36, ratio: 0.5, subscribe: true, plan: 'pro', region: 'eu', legacy: 'b', tags: ['x', 'y'], colors: ['g'] }
    expect(JSON.parse((await outcome.locator('pre').first().textContent()) ?? '')).toEqual({ action: 'accept', content: expected })
    // The terminal's prompt was withdrawn: the console answered first.
    await until('the terminal to let go of the question', () => dev.output.includes('no longer asked'))

    // The journal shows the question and its answer on the call.
    await outcome.getByRole('link', { name: 'in the journal' }).click()
    const asked = page.locator('ul.asked li')
    await asked.waitFor()
    expect(await asked.textContent()).toContain('question: Fill in your profile → accept')
    expect(JSON.parse((await asked.locator('code').textContent()) ?? '')).toEqual(expected)
    expect(await page.locator('.wf-track .wf-q.accept').getAttribute('aria-label')).toContain('question: Fill in your profile → accept')
    await page.screenshot({ path: path.join(SHOTS, 'console-question-journal.png'), fullPage: true })
    expect(dev.output).not.toMatch(/page error/)
  })

  it('takes a question answered at the terminal off the page, and the tool gets that answer', async () => {
    await page.goto(`${base}#/questions`)
    await page.locator('main h1', { hasText: 'Questions' }).waitFor()
    // `seam call` in the folder goes through the running seam dev, which asks at its terminal and on the page.
    const call = spawn(process.execPath, [BIN, 'call', 'profile', '{}', '--dir', dev.dir, '--json'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
    let printed = ''
    call.stdout!.on('data', (chunk: Buffer) => {
      printed += chunk.toString()
    })
    const exited = new Promise<number | null>((resolve) => call.once('exit', resolve))
    const card = page.locator('ol.questions li.card', { hasText: 'Fill in your profile' })
    await card.waitFor({ timeout: 10_000 })
    expect(await page.locator('nav .count').nth(1).textContent()).toBe('1')
    const asked = dev.output.length
    await until('the terminal prompt', () => dev.output.slice(asked).includes('answer it?') || dev.output.includes('profile asks'))
    dev.child.stdin!.write('n\r')
    await card.waitFor({ state: 'detached', timeout: 5_000 })
    await page.locator('ol.questions li.empty').waitFor()
    expect(await exited).toBe(0)
    const outcome = JSON.parse(printed) as { status: string; content: { text: string }[] }
    expect(outcome.status).toBe('completed')
    expect(JSON.parse(outcome.content[0]!.text)).toEqual({ action: 'decline' })
  })
})

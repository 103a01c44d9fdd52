import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { chatReply, modelServer } from '../src/adapters/fixtures/model-server.js'
import { chunk, sseServer } from '../src/adapters/fixtures/sse-server.js'
import { BIN } from './cli-kit.js'
import { EVERY_SHAPE } from './question-shapes.js'

const tool = (name: string, approval: string, body: string) => `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: ${JSON.stringify(`The ${name} tool.`)},
  input: z.object({ id: z.string() }),
  approval: ${JSON.stringify(approval)},
  async execute({ id }) {
    ${body}
  },
})
`

async function pluginFolder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-chat-'))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true })
    await writeFile(path.join(dir, name), text)
  }
  return dir
}

/** `seam chat …` with piped stdin; its output (stdout and stderr) collects in `text`. `env` entries set to undefined are removed. */
function chat(args: string[], env: Record<string, string | undefined> = {}) {
  const merged: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: 'test-key', ...env }
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key]
  const child: ChildProcess = spawn(process.execPath, [BIN, 'chat', ...args], {
    env: merged as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let text = ''
  let waiter: (() => void) | undefined
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk) => {
      text += chunk
      waiter?.()
    })
  }
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })))
  return {
    child,
    closed,
    get text() {
      return text
    },
    say(line: string) {
      child.stdin!.write(`${line}\n`)
    },
    until(pattern: RegExp, ms = 30_000): Promise<RegExpMatchArray> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${ms} ms; output:\n${text}`)), ms)
        const check = () => {
          const match = text.match(pattern)
          if (!match) return
          clearTimeout(timer)
          waiter = undefined
          resolve(match)
        }
        waiter = check
        check()
      })
    },
  }
}

describe('seam chat', { timeout: 60_000 }, () => {
  it('resumes a session that crashed mid-turn with a history the API accepts', async () => {
    const server = await modelServer({
      chat: [
        chatReply(null, [
          { id: 'call_1', name: 'lookup', arguments: '{"id":"T-1"}' },
          { id: 'call_2', name: 'deploy', arguments: '{"id":"T-1"}' },
        ]),
        chatReply('The deploy may not have run; check it before retrying.'),
        chatReply('Still unsure.'),
      ],
    })
    onTestFinished(() => server.close())
    const dir = await pluginFolder({
      'tools/lookup.ts': tool('lookup', 'never', 'return { id, state: "ready" }'),
      'tools/deploy.ts': tool('deploy', 'never', "process.kill(process.pid, 'SIGKILL'); await new Promise(() => {})"),
    })
    const flags = ['--base-url', `${server.url}/v1`, '--model', 'scripted']

    const first = chat([dir, ...flags])
    const [, session] = await first.until(/session\s+(chat-[\w-]+)/)
    first.say('Deploy T-1.')
    expect(await first.closed).toMatchObject({ signal: 'SIGKILL' })

    const second = chat([dir, '--resume', session!, ...flags])
    await second.until(/resumed 1 turn/)
    second.say('Did it deploy?')
    await second.until(/may not have run/)
    second.child.stdin!.end()
    expect(await second.closed).toMatchObject({ code: 0 })

    expect(server.refusals).toEqual([])
    const resumed = server.requests.chat[1]!.messages as Record<string, unknown>[]
    expect(resumed).toEqual([
      { role: 'user', content: 'Deploy T-1.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"id":"T-1"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"id":"T-1","state":"ready"}' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'deploy', arguments: '{"id":"T-1"}' } }] },
      { role: 'tool', tool_call_id: 'call_2', content: expect.stringContaining('it may or may not have run') },
      { role: 'user', content: 'Did it deploy?' },
    ])

    // Without its chat log the session resumes from the journal alone: calls and results, no words.
    await rm(path.join(dir, '.seam', 'chat'), { recursive: true })
    const third = chat([dir, '--resume', session!, ...flags])
    await third.until(/resumed session .* from the journal/)
    third.say('Again?')
    await third.until(/Still unsure/)
    third.child.stdin!.end()
    expect(await third.closed).toMatchObject({ code: 0 })
    expect((server.requests.chat[2]!.messages as { role: string }[]).map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant', 'tool', 'user'])
    expect(server.refusals).toEqual([])
  })

  it('shows a running call’s progress as a line per second when its output is not a terminal', async () => {
    const server = await modelServer({ chat: [chatReply(null, [{ id: 'call_1', name: 'crawl', arguments: '{"id":"site"}' }]), chatReply('Crawled it.')] })
    onTestFinished(() => server.close())
    const crawl = tool('crawl', 'never', `
    for (let done = 1; done <= 12; done++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      arguments[1].progress({ done, total: 12, message: 'page ' + done })
    }
    return 'crawled ' + id`)
    const dir = await pluginFolder({ 'tools/crawl.ts': crawl })
    const run = chat([dir, '--base-url', `${server.url}/v1`, '--model', 'scripted'])
    await run.until(/session/)
    run.say('Crawl the site.')
    await run.until(/Crawled it\./)
    run.child.stdin!.end()
    expect(await run.closed).toMatchObject({ code: 0 })
    const lines = run.text.split('\n').filter((l) => l.startsWith('⋯ crawl'))
    // 12 reports over 2.4 s, a line at most once a second: the first, then about two more.
    expect(lines[0]).toBe('⋯ crawl 1/12 (8 %) page 1')
    expect(lines.length).toBeGreaterThanOrEqual(2)
    expect(lines.length).toBeLessThanOrEqual(4)
    for (const l of lines) expect(l).toMatch(/^⋯ crawl \d+\/12 \(\d+ %\) page \d+$/)
    // Between the call's start and its result.
    expect(run.text.indexOf('→ crawl')).toBeLessThan(run.text.indexOf('⋯ crawl'))
    expect(run.text.indexOf('⋯ crawl')).toBeLessThan(run.text.indexOf('✓ crawl'))
  })

  it('asks a tool’s question at the terminal, field by field, every schema shape, and declines on n', async () => {
    const server = await modelServer({
      chat: [
        chatReply(null, [{ id: 'call_1', name: 'profile', arguments: '{"id":"me"}' }]),
        chatReply('Profile saved.'),
        chatReply(null, [{ id: 'call_2', name: 'profile', arguments: '{"id":"me"}' }]),
        chatReply('Declined.'),
      ],
    })
    onTestFinished(() => server.close())
    const profile = tool('profile', 'never', `return await arguments[1].ask({ message: 'Your profile, please.', schema: ${JSON.stringify(EVERY_SHAPE)} })`)
    const dir = await pluginFolder({ 'tools/profile.ts': profile })
    const run = chat([dir, '--base-url', `${server.url}/v1`, '--model', 'scripted'])
    await run.until(/session/)
    run.say('Set up my profile.')
    await run.until(/profile asks: Your profile, please\./)
    // yes; name, email, age, ratio (default), subscribe, plan by number, region by title,
    // legacy left out, tags (default), colors by numbers.
    for (const answer of ['y', 'Ada', 'ada@example.org', '36', '', 'n', '2', 'Europe', '', '', '1, 2']) run.say(answer)
    await run.until(/Profile saved\./)
    run.say('Again.')
    await run.until(/profile asks/g)
    run.say('n')
    await run.until(/Declined\./)
    run.child.stdin!.end()
    expect(await run.closed).toMatchObject({ code: 0 })
    const tools = (i: number) => (server.requests.chat[i]!.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool')
    expect(JSON.parse(tools(1)[0]!.content)).toEqual({
      action: 'accept',
      content: { name: 'Ada', email: 'ada@example.org', age: 36, ratio: 0.5, subscribe: false, plan: 'pro', region: 'eu', tags: ['x'], colors: ['r', 'g'] },
    })
    expect(JSON.parse(tools(3).at(-1)!.content)).toEqual({ action: 'decline' })
    expect(run.text.match(/\? profile asks: Your profile, please\./g)).toHaveLength(2)
  })

  it('offers run_code with --code, and the model\'s program calls the tools as nested calls', async () => {
    const code = 'const a = await tools.lookup({ id: "T-1" }); const b = await tools.lookup({ id: "T-2" }); return [a.state, b.id]'
    const server = await modelServer({
      chat: [chatReply(null, [{ id: 'call_1', name: 'run_code', arguments: JSON.stringify({ code }) }]), chatReply('Both are ready.')],
    })
    onTestFinished(() => server.close())
    const dir = await pluginFolder({ 'tools/lookup.ts': tool('lookup', 'never', 'return { id, state: "ready" }') })
    const session = chat([dir, '--code', '--base-url', `${server.url}/v1`, '--model', 'scripted'])
    await session.until(/tools\s+lookup, run_code/)
    session.say('Look up T-1 and T-2.')
    await session.until(/Both are ready/)
    session.child.stdin!.end()
    expect(await session.closed).toMatchObject({ code: 0 })
    const offered = (server.requests.chat[0]!.tools as { function: { name: string; description: string } }[]).map((t) => t.function)
    expect(offered.map((t) => t.name)).toEqual(['lookup', 'run_code'])
    expect(offered[1]!.description).toContain('lookup(args: {')
    const second = server.requests.chat[1]!.messages as { role: string; content: string }[]
    // The model reads the run's one result: the program's value, not the two lookups.
    expect(second.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content))).toEqual([{ value: ['ready', 'T-2'], logs: [] }])
    expect(server.refusals).toEqual([])
  })

  it('asks for approval at the terminal and picks up an edited tool from the next message', async () => {
    const server = await modelServer({
      chat: [
        chatReply(null, [{ id: 'call_1', name: 'launch', arguments: '{"id":"L-1"}' }]),
        chatReply('Launched.'),
        (request) => chatReply(`tools: ${(request.tools as { function: { name: string } }[]).map((t) => t.function.name).join(',')}`),
      ],
    })
    onTestFinished(() => server.close())
    const dir = await pluginFolder({ 'tools/launch.ts': tool('launch', 'always', "return 'launched ' + id") })
    const run = chat([dir, '--base-url', `${server.url}/v1`, '--model', 'scripted'])
    await run.until(/session/)
    run.say('Launch L-1.')
    await run.until(/Allow launch/)
    run.say('y')
    await run.until(/Launched\./)
    await writeFile(path.join(dir, 'tools/land.ts'), tool('land', 'never', "return 'landed'"))
    await run.until(/generation 2 live/)
    run.say('Which tools?')
    await run.until(/tools: (launch,land|land,launch)/)
    run.child.stdin!.end()
    expect(await run.closed).toMatchObject({ code: 0 })
    expect(run.text).toMatch(/✓ launch/)
    const toolMessage = (server.requests.chat[1]!.messages as { role: string; content: string }[]).find((m) => m.role === 'tool')
    expect(toolMessage?.content).toBe('launched L-1')
  })
  it('says at start, naming OPENAI_API_KEY and --base-url, when the public endpoint has no key', async () => {
    const dir = await pluginFolder({ 'tools/lookup.ts': tool('lookup', 'never', 'return id') })
    const run = chat([dir, '--model', 'gpt-test'], { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined })
    // No message is typed: the problem is reported before the first one.
    expect(await run.closed).toMatchObject({ code: 2 })
    expect(run.text).toMatch(/OPENAI_API_KEY is not set, and https:\/\/api\.openai\.com\/v1 needs it/)
    expect(run.text).toMatch(/--base-url/)
    expect(run.text).not.toMatch(/session/)
  })

  it('starts without a key against a local server, and shows the answer as it streams in', async () => {
    let rest!: () => void
    const restSent = new Promise<void>((resolve) => (rest = resolve))
    const server = await sseServer([
      async (send) => {
        send(chunk({ content: 'Half an ' }))
        await restSent
        send(chunk({ content: 'answer, then the rest.' }, 'stop'))
      },
    ])
    onTestFinished(() => server.close())
    onTestFinished(() => rest())
    const dir = await pluginFolder({
      'tools/lookup.ts': tool('lookup', 'never', 'return id'),
      'agent/skills/notes.md': '---\ndescription: Keep notes.\n---\nWrite each decision down.\n',
    })
    const run = chat([dir, '--base-url', server.baseUrl, '--model', 'scripted'], { OPENAI_API_KEY: undefined })
    await run.until(/skills\s+notes\n/)
    expect(run.text).toMatch(/tools\s+lookup, load_skill\n/)
    run.say('Tell me.')
    // The first piece is on the terminal while the server still holds back the rest.
    await run.until(/Half an /)
    expect(run.text).not.toMatch(/then the rest/)
    rest()
    await run.until(/Half an answer, then the rest\.\n/)
    run.child.stdin!.end()
    expect(await run.closed).toMatchObject({ code: 0 })
    expect(server.requests[0]).toMatchObject({ stream: true })
    const system = (server.requests[0]!.messages as { role: string; content: string }[])[0]!
    expect(system).toMatchObject({ role: 'system', content: expect.stringContaining('- notes: Keep notes.') })
    expect(system.content).not.toContain('Write each decision down.')
  })
})

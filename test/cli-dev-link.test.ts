import { type ChildProcess, spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, get } from 'node:http'
import type { AddressInfo } from 'node:net'
import { userInfo } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { describe, expect, it, onTestFinished } from 'vitest'
import { pluginFolder, put, seam, start, tool, watch } from './cli-kit.js'

/** A tool module that takes this long to load: what makes a cold root slow (MCP mounts, big imports). */
const SLOW_LOAD_MS = 3000
// Tool files are evaluated synchronously: a blocking sleep that burns no CPU.
const slowTool = `
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${SLOW_LOAD_MS})
${tool('Loads slowly.', 'never', 'return text')}
`
/** A tool that always asks, and leaves a trace when it runs. */
const noteTool = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { appendFileSync } from 'node:fs'
export default defineTool({
  description: 'Append a note.',
  input: z.object({ text: z.string() }),
  approval: 'always',
  execute({ text }) {
    appendFileSync(new URL('../ran.txt', import.meta.url), text + '\\n')
    return 'noted ' + text
  },
})
`

interface Dev {
  readonly child: ChildProcess
  readonly out: ReturnType<typeof watch>
  /** The discovery file, and what it says. */
  readonly linkFile: string
  readonly link: { pid: number; url: string; token: string }
  /** The MCP server's origin, where the console answers too. */
  readonly web: string
}

/** `seam dev <dir>` on a free port, until it watches; killed when the test ends. */
async function startDev(dir: string): Promise<Dev> {
  const child = start(['dev', dir, '--port', '0', '--no-check'])
  onTestFinished(() => void child.kill('SIGKILL'))
  const out = watch(child)
  await out.until(/watching for changes/)
  const linkFile = path.join(dir, '.seam', 'dev.json')
  const link = JSON.parse(await readFile(linkFile, 'utf8')) as Dev['link']
  const web = new URL(/mcp\s+(http:\/\/\S+)/.exec(out.text)![1]!).origin
  return { child, out, linkFile, link, web }
}

const via = (dev: Dev, generation: number) => `via seam dev at ${dev.link.url}, generation ${generation} (pid ${dev.child.pid})\n`

/** A loopback port nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('seam call, tools, journal and approvals talk to a running seam dev of the folder', { timeout: 60_000 }, () => {
  it('uses the dev server (fast, its generation, journaled there), removes the file on exit; --local loads the folder', async () => {
    const dir = await pluginFolder({
      'tools/echo.ts': tool('Echo text back.', 'never', 'return { echoed: text }'),
      'tools/slow.ts': slowTool,
    })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const dev = await startDev(dir)
    expect(statSync(dev.linkFile).mode & 0o777).toBe(0o600)
    expect(dev.link).toEqual({ pid: dev.child.pid, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), token: expect.stringMatching(/^[\w-]{32}$/) })
    expect(dev.out.text).toContain(`cli        ${dev.link.url}`)

    const from = dev.out.text.length
    await put(dir, 'tools/shout.ts', tool('Shout.', 'never', 'return text.toUpperCase()'))
    await dev.out.until(/generation 2 live/, from)

    const listed = await seam('tools', dir)
    expect(listed.stderr).toBe(via(dev, 2))
    expect(listed.stdout).toMatch(/^generation 2: 3 tools, 0 skills/)
    expect(listed.stdout).toMatch(/shout\s+tools\/shout\.ts\s+never\s+text: string, times\?: integer/)
    const json = await seam('tools', dir, '--json')
    expect(JSON.parse(json.stdout)).toMatchObject({ generation: 2, tools: [{ name: 'echo' }, { name: 'shout' }, { name: 'slow' }], providers: [] })

    const started = performance.now()
    const call = await seam('call', 'echo', '{"text":"hi"}', '--dir', dir, '--session', 'linked', '--json')
    const viaDevMs = performance.now() - started
    expect(call.stderr).toBe(via(dev, 2))
    const outcome = JSON.parse(call.stdout)
    expect(outcome).toMatchObject({ status: 'completed', name: 'echo', generation: 2, content: [{ type: 'text', text: '{"echoed":"hi"}' }] })
    // No folder loaded: the slow tool's module is not imported again.
    expect(viaDevMs).toBeLessThan(SLOW_LOAD_MS)

    // In the dev server's own journal: what `seam journal` reads through it, and the console lists.
    const journal = await seam('journal', dir, '--turn', outcome.turnId)
    expect(journal.stderr).toBe(via(dev, 2))
    expect(journal.stdout).toMatch(/turn\/begin\s+session linked · \S+ · generation 2/)
    expect(journal.stdout).toMatch(/tool\/result\s+cli-\w+\s+completed/)
    const { turns } = (await (await fetch(`${dev.web}/api/turns?session=linked`)).json()) as { turns: { turnId: string }[] }
    expect(turns.map((t) => t.turnId)).toEqual([outcome.turnId])

    const local = await seam('call', 'echo', '{"text":"here"}', '--dir', dir, '--local')
    expect(local.stderr).toMatch(/^local \(--local\): loaded the folder \(\d+ ms\)\n$/)
    // Its own root: generation 1, and it paid for the slow module.
    expect(local.stdout).toMatch(/^completed echo \(.*\) · turn \w+ · generation 1\n\{"echoed":"here"\}/)
    expect(Number(/\((\d+) ms\)/.exec(local.stderr)![1])).toBeGreaterThanOrEqual(SLOW_LOAD_MS)
    const localJournal = await seam('journal', dir, '--local', '--tail', '1')
    expect(localJournal.stderr).toBe(`local (--local): read ${path.join(dir, '.seam', 'journal.db')}\n`)

    dev.child.kill('SIGTERM')
    await new Promise((resolve) => dev.child.once('close', resolve))
    expect(existsSync(dev.linkFile)).toBe(false)
    const after = await seam('tools', dir)
    expect(after.stderr).toMatch(/^local \(no seam dev running\): loaded the folder/)
  })

  it('parks a call in seam dev when nobody is there to answer; seam approvals lists, decides and resumes it there', async () => {
    const dir = await pluginFolder({ 'tools/note.ts': noteTool })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const dev = await startDev(dir)

    // No console page open and no terminal: the question cannot be asked, so the call waits in the journal.
    const call = await seam('call', 'note', '{"text":"hello"}', '--dir', dir, '--session', 'chat-1')
    expect(call.stderr).toBe(via(dev, 1))
    expect(call.code).toBe(1)
    expect(call.stdout).toMatch(/^suspended APPROVAL_PENDING \(approval\) note .* · generation 1$/m)
    const callId = /seam approvals --decide (cli-\w+) allow --resume/.exec(call.stdout)![1]!
    expect(existsSync(path.join(dir, 'ran.txt'))).toBe(false)

    const listed = await seam('approvals', dir)
    expect(listed.stderr).toBe(via(dev, 1))
    expect(listed.stdout).toMatch(new RegExp(`${callId} +note text="hello" .* ${userInfo().username} · chat-1 .* waiting allow\\|reject`))
    const parked = (await (await fetch(`${dev.web}/api/parked`)).json()) as { callId: string }[]
    expect(parked.map((p) => p.callId)).toEqual([callId])

    // The runtime's refusal comes back over the link as the same error: a usage error, the call still waiting.
    const refused = await seam('approvals', dir, '--decide', callId, 'allow-session')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe(`${via(dev, 1)}seam: ${callId} (note) offers allow or reject, not allow-session; it is still waiting\nhint: seam approvals --decide ${callId} allow|reject\n`)

    const decided = await seam('approvals', dir, '--decide', callId, 'allow', '--by', 'bob', '--resume', '--json')
    expect(decided.stderr).toBe(via(dev, 1))
    expect(decided.code).toBe(0)
    expect(JSON.parse(decided.stdout)).toMatchObject({ callId, decision: { answer: 'allowed-once', by: 'bob' }, outcome: { status: 'completed', generation: 1 } })
    // It ran in the dev process, which journaled its result.
    expect(await readFile(path.join(dir, 'ran.txt'), 'utf8')).toBe('hello\n')
    const journal = await seam('journal', dir, '--tail', '5')
    expect(journal.stderr).toBe(via(dev, 1))
    expect(journal.stdout).toMatch(new RegExp(`tool/result\\s+${callId}\\s+completed`))
    expect(await (await fetch(`${dev.web}/api/parked`)).json()).toEqual([])
    expect((await seam('approvals', dir)).stdout).toContain('no calls are waiting')

    // An error over the link is the same error: a decided call decided again.
    const again = await seam('approvals', dir, '--decide', callId, 'reject')
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(new RegExp(`^${literal(via(dev, 1))}seam: .*${callId}`))
  })

  it('refuses a wrong token, a page (Origin) and another Host; the CLI then says why it works locally', async () => {
    const dir = await pluginFolder({ 'tools/echo.ts': tool('Echo text back.', 'never', 'return { echoed: text }') })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const dev = await startDev(dir)
    const state = `${dev.link.url}/api/cli/state`
    const right = { authorization: `Bearer ${dev.link.token}` }
    expect(await status(state, right)).toBe(200)
    expect(await status(state, {})).toBe(401)
    expect(await status(state, { authorization: 'Bearer wrong' })).toBe(401)
    expect(await status(state, { ...right, origin: 'http://evil.example' })).toBe(401)
    expect(await status(state, { ...right, host: 'evil.example' })).toBe(401)
    // The console's server does not answer the CLI routes.
    expect(await status(`${dev.web}/api/cli/state`, right)).not.toBe(200)

    await writeFile(dev.linkFile, JSON.stringify({ ...dev.link, token: 'wrong' }))
    const listed = await seam('tools', dir)
    expect(listed.code).toBe(0)
    expect(listed.stderr).toMatch(new RegExp(`^local \\(seam dev at ${literal(dev.link.url)} refused the token in \\.seam/dev\\.json\\): loaded the folder`))
    expect(listed.stdout).toMatch(/^generation 1: 1 tools/)
  })

  it('ignores and removes a discovery file whose process is gone, or whose URL nothing listens at', async () => {
    const dir = await pluginFolder({ 'tools/echo.ts': tool('Echo text back.', 'never', 'return { echoed: text }') })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const gone = spawnSync(process.execPath, ['-e', '']).pid
    const linkFile = path.join(dir, '.seam', 'dev.json')
    const url = `http://127.0.0.1:${await closedPort()}`
    await put(dir, '.seam/dev.json', JSON.stringify({ pid: gone, url, token: 'stale' }))
    const listed = await seam('tools', dir)
    expect(listed.stderr).toMatch(/^local \(no seam dev running; removed the stale \.seam\/dev\.json\): loaded the folder \(\d+ ms\)\n$/)
    expect(listed.stdout).toMatch(/^generation 1: 1 tools/)
    expect(existsSync(linkFile)).toBe(false)

    // Its process alive but nothing listening at the URL (the server stopped): removed too.
    await writeFile(linkFile, JSON.stringify({ pid: process.pid, url, token: 'stale' }))
    const call = await seam('call', 'echo', '{"text":"x"}', '--dir', dir)
    expect(call.stderr).toMatch(/^local \(no seam dev running; removed the stale \.seam\/dev\.json\): loaded the folder/)
    expect(call.code).toBe(0)
    expect(existsSync(linkFile)).toBe(false)
    const journal = await seam('journal', dir)
    expect(journal.stderr).toBe(`local (no seam dev running): read ${path.join(dir, '.seam', 'journal.db')}\n`)
    expect(journal.stdout).toMatch(/tool\/result\s+cli-\w+\s+completed/)
    const approvals = await seam('approvals', dir)
    expect(approvals.stderr).toBe(`local (no seam dev running): read ${path.join(dir, '.seam', 'journal.db')}\n`)
    expect(approvals.stdout).toContain('no calls are waiting')
  })
})

/** The status of a GET with exactly these headers (`Host` too, which fetch would not send). */
function status(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      res.resume()
      resolve(res.statusCode!)
    }).on('error', reject)
  })
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

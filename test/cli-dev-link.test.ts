import { spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
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

/** A loopback port nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('seam call, tools and journal talk to a running seam dev of the folder', { timeout: 40_000 }, () => {
  it('uses the dev server (fast, its generation, journaled there), removes the file on exit; --local loads the folder', async () => {
    const dir = await pluginFolder({
      'tools/echo.ts': tool('Echo text back.', 'never', 'return { echoed: text }'),
      'tools/slow.ts': slowTool,
    })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const dev = start(['dev', dir, '--port', '0', '--no-check'])
    onTestFinished(() => void dev.kill('SIGKILL'))
    const out = watch(dev)
    await out.until(/watching for changes/)
    const linkFile = path.join(dir, '.seam', 'dev.json')
    expect(statSync(linkFile).mode & 0o777).toBe(0o600)

    const from = out.text.length
    await put(dir, 'tools/shout.ts', tool('Shout.', 'never', 'return text.toUpperCase()'))
    await out.until(/generation 2 live/, from)

    const listed = await seam('tools', dir)
    expect(listed.stderr).toBe(`via seam dev (pid ${dev.pid}, generation 2)\n`)
    expect(listed.stdout).toMatch(/^generation 2: 3 tools, 0 skills/)
    expect(listed.stdout).toMatch(/shout\s+tools\/shout\.ts\s+never\s+text: string, times\?: integer/)
    const json = await seam('tools', dir, '--json')
    expect(JSON.parse(json.stdout)).toMatchObject({ generation: 2, tools: [{ name: 'echo' }, { name: 'shout' }, { name: 'slow' }], providers: [] })

    const started = performance.now()
    const call = await seam('call', 'echo', '{"text":"hi"}', '--dir', dir, '--session', 'linked', '--json')
    const viaDevMs = performance.now() - started
    expect(call.stderr).toBe(`via seam dev (pid ${dev.pid}, generation 2)\n`)
    const outcome = JSON.parse(call.stdout)
    expect(outcome).toMatchObject({ status: 'completed', name: 'echo', generation: 2, content: [{ type: 'text', text: '{"echoed":"hi"}' }] })
    // No folder loaded: the slow tool's module is not imported again.
    expect(viaDevMs).toBeLessThan(SLOW_LOAD_MS)

    const journal = await seam('journal', dir, '--turn', outcome.turnId)
    expect(journal.stderr).toBe(`via seam dev (pid ${dev.pid}, generation 2)\n`)
    expect(journal.stdout).toMatch(/turn\/begin\s+session linked · \S+ · generation 2/)
    expect(journal.stdout).toMatch(/tool\/result\s+cli-\w+\s+completed/)

    const local = await seam('call', 'echo', '{"text":"here"}', '--dir', dir, '--local')
    expect(local.stderr).toMatch(/^--local: loaded the folder \(\d+ ms\)\n$/)
    // Its own root: generation 1, and it paid for the slow module.
    expect(local.stdout).toMatch(/^completed echo \(.*\) · turn \w+ · generation 1\n\{"echoed":"here"\}/)
    expect(Number(/\((\d+) ms\)/.exec(local.stderr)![1])).toBeGreaterThanOrEqual(SLOW_LOAD_MS)

    dev.kill('SIGTERM')
    await new Promise((resolve) => dev.once('close', resolve))
    expect(existsSync(linkFile)).toBe(false)
  })

  it('ignores and removes a discovery file whose process is gone', async () => {
    const dir = await pluginFolder({ 'tools/echo.ts': tool('Echo text back.', 'never', 'return { echoed: text }') })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const gone = spawnSync(process.execPath, ['-e', '']).pid
    const linkFile = path.join(dir, '.seam', 'dev.json')
    const url = `http://127.0.0.1:${await closedPort()}`
    await put(dir, '.seam/dev.json', JSON.stringify({ pid: gone, url, token: 'stale' }))
    const listed = await seam('tools', dir)
    expect(listed.stderr).toMatch(/^no seam dev running: loaded the folder \(\d+ ms\)\n$/)
    expect(listed.stdout).toMatch(/^generation 1: 1 tools/)
    expect(existsSync(linkFile)).toBe(false)

    // Its process alive but nothing listening at the URL (the server stopped): removed too.
    await writeFile(linkFile, JSON.stringify({ pid: process.pid, url, token: 'stale' }))
    const call = await seam('call', 'echo', '{"text":"x"}', '--dir', dir)
    expect(call.stderr).toMatch(/^no seam dev running: loaded the folder/)
    expect(call.code).toBe(0)
    expect(existsSync(linkFile)).toBe(false)
    const journal = await seam('journal', dir)
    expect(journal.stderr).toBe(`no seam dev running: read ${path.join(dir, '.seam', 'journal.db')}\n`)
    expect(await readFile(path.join(dir, '.seam', 'journal.db')).then((b) => b.length)).toBeGreaterThan(0)
  })
})

import { spawn } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { BIN, noStack, pluginFolder, put, seam, start, tool, watch } from './cli-kit.js'

// Each test spawns the built `seam` (dist/cli/bin.js, about 0.3 s of CPU), so they overlap.
describe.concurrent('seam tools, call and journal on a plugin folder', { timeout: 60_000 }, () => {
  let dir: string
  beforeAll(async () => {
    dir = await pluginFolder({
      'tools/echo.ts': tool('Echo text back.', 'never', 'return { echoed: text.repeat(times ?? 1) }'),
      'tools/launch.ts': tool('Launch something.', 'always', "return 'launched ' + text"),
    })
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it('lists the catalog as JSON and as a table with a schema summary', async () => {
    const [json, table] = await Promise.all([seam('tools', dir, '--json'), seam('tools', dir)])
    expect(json.code).toBe(0)
    const catalog = JSON.parse(json.stdout)
    expect(catalog.tools.map((t: { name: string }) => t.name)).toEqual(['echo', 'launch'])
    expect(catalog.tools[0]).toMatchObject({ name: 'echo', source: 'tools/echo.ts', approval: 'never', summary: 'text: string, times?: integer' })
    expect(table.stdout).toMatch(/echo\s+tools\/echo\.ts\s+never\s+text: string, times\?: integer/)
  })

  // Concurrent tests: the context's onTestFinished, so the folder goes when this test ends, not a sibling.
  it('says why a mounted MCP server contributed no tools', async ({ onTestFinished }) => {
    const down = await pluginFolder({
      'plugin.ts': `
import { capabilitySeamToken, McpToolService, SeamIntegration } from 'seam-runtime'
import { definePlugin } from 'seam-runtime/plugin-runtime'
export default definePlugin({
  name: 'root',
  setup({ resources, effect }) {
    const seams = new SeamIntegration()
    const missing = new McpToolService({ id: 'missing', transport: { command: '/nonexistent/mcp-server' } })
    effect(() => missing.dispose(), 'mcp missing')
    seams.registerToolService('global', missing)
    resources.provide(capabilitySeamToken, seams, () => seams.dispose())
  },
})
`,
    })
    onTestFinished(() => rm(down, { recursive: true, force: true }))
    const [table, json] = await Promise.all([seam('tools', down), seam('tools', down, '--json')])
    // No `seam dev` of the folder runs: each loads it, and says so on stderr (stdout stays the listing).
    expect(table.stderr).toMatch(/^local \(no seam dev running\): loaded the folder \(\d+ ms\)\n$/)
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/generation 1: 0 tools/)
    expect(table.stdout).toMatch(/provider missing {2}down {2}retrying in \d+ s: connecting failed: .*ENOENT/)
    expect(json.code).toBe(0)
    expect(json.stderr).toMatch(/^local \(no seam dev running\): loaded the folder \(\d+ ms\)\n$/)
    expect(JSON.parse(json.stdout).providers).toEqual([expect.objectContaining({ provider: 'missing', state: 'down' })])
  })

  it('completes a call, prints the value and exits 0', async () => {
    const run = await seam('call', 'echo', '{"text":"hi","times":2}', '--dir', dir)
    expect(run.stderr).toMatch(/^local \(no seam dev running\): loaded the folder \(\d+ ms\)\n$/)
    expect(run.stdout).toMatch(/^completed echo \(\d+(\.\d)? ms\)/)
    expect(run.stdout).toContain('{"echoed":"hihi"}')
    expect(run.code).toBe(0)
  })

  it('denies a tool that always asks when there is no terminal, and exits 1', async () => {
    const run = await seam('call', 'launch', '{"text":"rocket"}', '--dir', dir)
    expect(run.stdout).toMatch(/^denied APPROVAL_UNAVAILABLE \(approval\) launch/)
    expect(run.stdout).not.toContain('launched')
    expect(run.code).toBe(1)
  })

  it('fails a call with invalid JSON as INVALID_ARGS and exits 1', async () => {
    const run = await seam('call', 'echo', '{"text":', '--dir', dir)
    expect(run.stdout).toMatch(/^failed INVALID_ARGS echo/)
    expect(run.stdout).toContain('not valid JSON')
    expect(run.code).toBe(1)
  })

  it('reads a call back from the journal, as lines and as JSON lines', async () => {
    const call = await seam('call', 'echo', '{"text":"back"}', '--dir', dir, '--json')
    expect(call.code).toBe(0)
    const outcome = JSON.parse(call.stdout)
    expect(outcome).toMatchObject({ name: 'echo', status: 'completed', value: { echoed: 'back' } })
    const short = outcome.turnId.slice(0, 8)
    const [lines, json] = await Promise.all([seam('journal', dir, '--turn', short), seam('journal', dir, '--turn', outcome.turnId, '--json')])
    expect(lines.code).toBe(0)
    expect(lines.stdout).toMatch(new RegExp(`${short}\\s+#2\\s+tool/call\\s+${outcome.callId}\\s+echo \\{"text":"back"\\}`))
    expect(lines.stdout).toMatch(new RegExp(`${short}\\s+#3\\s+tool/result\\s+${outcome.callId}\\s+completed \\d`))
    const kinds = json.stdout.trim().split('\n').map((l) => JSON.parse(l).kind)
    expect(kinds).toEqual(['turn/begin', 'tool/call', 'tool/result', 'turn/end'])
  })
})

describe('seam output through a pipe', { timeout: 60_000 }, () => {
  it('writes a result far past the 64 KiB pipe buffer completely, even to a reader that starts late', async () => {
    const dir = await pluginFolder({
      'tools/big.ts': "import { defineTool } from 'seam-runtime'\nexport default defineTool({ description: 'Big.', input: {}, approval: 'never', execute: () => 'x'.repeat(300_000) })\n",
    })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const quoted = [process.execPath, BIN, 'call', 'big', '{}', '--dir', dir, '--json'].map((a) => `'${a}'`).join(' ')
    const child = spawn('sh', ['-c', `${quoted} | (sleep 0.3; cat)`], { stdio: ['ignore', 'pipe', 'inherit'] })
    const chunks: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    await new Promise((resolve) => child.on('close', resolve))
    const outcome = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    expect(outcome.status).toBe('completed')
    expect(outcome.value).toHaveLength(300_000)
  })
})

describe('seam call on a tool that never answers', { timeout: 60_000 }, () => {
  it('prints the TOOL_TIMEOUT outcome and exits 1 once close has finished (not 13 mid-close)', async () => {
    const dir = await pluginFolder({
      'tools/stuck.ts': `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({ description: 'Never answers.', input: z.object({}), approval: 'never', timeoutMs: 50, execute: () => new Promise(() => {}) })
`,
    })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const run = await seam('call', 'stuck', '{}', '--dir', dir)
    expect(run.stdout).toMatch(/^failed TOOL_TIMEOUT stuck/)
    expect(run.code).toBe(1)
  })
})

describe.concurrent('seam usage and errors', { timeout: 60_000 }, () => {
  it('exits 2 with usage for an unknown command, a bad flag and a public host without a token', async () => {
    const [unknown, badFlag, host] = await Promise.all([
      seam('frobnicate'),
      seam('journal', '--tail', 'many'),
      seam('dev', tmpdir(), '--host', '0.0.0.0'),
    ])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("seam: unknown command 'frobnicate'")
    expect(badFlag.code).toBe(2)
    expect(badFlag.stderr).toContain('usage: seam journal')
    expect(host.code).toBe(2)
    expect(host.stderr).toContain('requires a bearer token')
    expect(host.stderr).toContain('hint: pass --token')
  })

  it('prints one line and a hint for an error, and the stack only with --debug', async () => {
    const missing = path.join(tmpdir(), 'seam-cli-no-such-folder')
    const [plain, debug] = await Promise.all([seam('tools', missing), seam('tools', missing, '--debug')])
    expect(plain.code).toBe(1)
    expect(plain.stderr).toBe(`seam: no plugin folder at ${missing}\nhint: pass a folder holding tools/, agent/skills/ or plugin.ts\n`)
    noStack(plain.stderr)
    expect(debug.code).toBe(1)
    expect(debug.stderr).toMatch(/^\s+at /m)
  })
})

describe('seam dev', { timeout: 60_000 }, () => {
  it('prints the banner, a line per publish, a framed diagnostic per failed reload, and exits 0 on SIGINT', async () => {
    const dir = await pluginFolder({ 'tools/echo.ts': tool('Echo text back.', 'never', 'return text') })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const child = start(['dev', dir, '--port', '0', '--no-check'], { SEAM_DEBOUNCE_MS: '100' })
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const out = watch(child)
    await out.until(/watching for changes/)
    expect(out.text).toMatch(/^seam-runtime \d+\.\d+\.\d+ dev /m)
    expect(out.text).toMatch(/^ {2}generation 1 live/m)
    expect(out.text).toMatch(/^ {2}tools +1 {2}echo$/m)
    expect(out.text).toMatch(/^ {2}skills +0$/m)
    expect(out.text).toContain(`journal    ${path.join(dir, '.seam', 'journal.db')}`)
    // Only the repository's own plugin runs commands (its run_command): no sandbox line for this one.
    expect(out.text).not.toMatch(/^ {2}commands /m)
    expect(out.text).toMatch(/^ {2}mcp {8}http:\/\/127\.0\.0\.1:\d+\/mcp$/m)

    let mark = out.text.length
    await put(dir, 'tools/echo.ts', tool('Echo the text back.', 'never', 'return text'))
    await out.until(/^generation 2 live: ~echo \(\d+(\.\d)? ms\)$/m, mark)

    mark = out.text.length
    await put(dir, 'tools/broken.ts', 'import { defineTool } from "seam-runtime"\nexport default defineTool({\n  execute() { return 1 +* 2 },\n})\n')
    await out.until(/generation 2 keeps serving/, mark)
    const failure = out.text.slice(mark)
    expect(failure).toMatch(/^reload failed/m)
    expect(failure).toMatch(/tools\/broken\.ts:3:25 Unexpected "\*"/)
    expect(failure).toContain('> 3 |   execute() { return 1 +* 2 },')

    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(out.text).toMatch(/stopped\n$/)
    noStack(out.text)
  })
})

describe('seam dev on the repository itself (npm start)', { timeout: 60_000 }, () => {
  it('serves the workspace plugin and says whether its run_command is sandboxed', async () => {
    const repository = fileURLToPath(new URL('..', import.meta.url))
    const child = start(['dev', repository, '--no-mcp', '--no-check'])
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const out = watch(child)
    await out.until(/watching for changes/)
    expect(out.text).toMatch(/^ {2}tools +\d+ {2}.*\brun_command\b/m)
    // CI installs bubblewrap, so the workspace plugin's run_command is sandboxed.
    expect(out.text).toMatch(/^ {2}commands {3}sandboxed \(bwrap\)$/m)
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
  })
})

describe('seam mcp', { timeout: 60_000 }, () => {
  it('serves the tools over stdio with only protocol messages on stdout, and exits 0 when the client closes stdin', async () => {
    const dir = await pluginFolder({ 'tools/echo.ts': tool('Echo text back.', 'never', 'return { echoed: text }') })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const child = start(['mcp', dir])
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    let stdout = ''
    let stderr = ''
    const replies = new Map<number, (message: { result?: Record<string, unknown> }) => void>()
    child.stderr?.on('data', (chunk) => (stderr += chunk))
    child.stdout?.on('data', (chunk) => {
      stdout += chunk
      const lines = stdout.split('\n')
      for (const text of lines.slice(0, -1)) {
        const message = JSON.parse(text)
        replies.get(message.id)?.(message)
      }
      stdout = lines.at(-1) ?? ''
    })
    let id = 0
    const request = (method: string, params: Record<string, unknown>) =>
      new Promise<{ result?: Record<string, unknown> }>((resolve) => {
        replies.set(++id, resolve)
        child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
      })
    await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cli-test', version: '1' } })
    child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
    const list = await request('tools/list', {})
    const tools = (list.result?.tools ?? []) as { name: string }[]
    expect(tools.map((t) => t.name)).toEqual(['echo'])
    const call = await request('tools/call', { name: 'echo', arguments: { text: 'over stdio' } })
    expect(call.result).toMatchObject({ structuredContent: { echoed: 'over stdio' } })
    expect(call.result?.isError).not.toBe(true)

    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.stdin?.end()
    expect(await exited).toBe(0)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/seam mcp: generation 1 \(1 tools, 0 skills\) on stdio/)
  })
})

import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { chatReply, modelServer } from '../../src/adapters/fixtures/model-server.js'

/**
 * The features of a round, used as a new user uses them: `npm pack`, installed into a fresh project
 * with only zod beside it (and better-sqlite3 on Node 20, whose SQLite journal needs it), then Code
 * Mode, nested calls, `seam dev` and the commands that talk to it, MCP over dev's HTTP server,
 * `seam chat --code` and SQLite fencing, each from that project. Run by `npm run test:package`.
 */
const repo = fileURLToPath(new URL('../..', import.meta.url))
const run = promisify(execFile)
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
const nodeHasSqlite = major > 22 || (major === 22 && minor >= 13)

const tool = (name: string, approval: string, input: string, body: string) => `import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: '${name}',
  input: z.object({ ${input} }),
  approval: '${approval}',
  async execute(args, ctx) {
    ${body}
  },
})
`

const FILES: Record<string, string> = {
  'plugin/tools/greet.ts': tool('greet', 'never', 'name: z.string()', "return { greeting: 'hello ' + args.name }"),
  'plugin/tools/double.ts': tool('double', 'never', 'n: z.number()', 'return args.n * 2'),
  // A nested call: the body calls another tool of its turn.
  'plugin/tools/sum_doubles.ts': tool(
    'sum_doubles',
    'never',
    'ns: z.array(z.number())',
    "const outcomes = await Promise.all(args.ns.map((n) => ctx.tools.call('double', { n })))\n    return outcomes.reduce((sum, o) => sum + (o.status === 'completed' ? o.value : 0), 0)",
  ),
  // Progress reports: a live signal to execute's onProgress and to an MCP client's progressToken.
  'plugin/tools/crawl.ts': tool(
    'crawl',
    'never',
    'pages: z.number()',
    "for (let i = 0; i < args.pages; i++) {\n      await new Promise((resolve) => setTimeout(resolve, 150))\n      ctx.progress({ done: i + 1, total: args.pages, message: 'page ' + (i + 1) })\n    }\n    return args.pages",
  ),
  'plugin/tools/launch.ts': tool('launch', 'always', 'id: z.string()', "return 'launched ' + args.id"),
  // Asks the person behind the call, and has the client's model sample: over MCP, in either era.
  'plugin/tools/profile.ts': tool(
    'profile',
    'never',
    '',
    "const answer = await ctx.ask({ message: 'Your name?', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } })\n    const reply = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Greet' } }], maxTokens: 20 })\n    return { answer, said: reply.content.type === 'text' ? reply.content.text : '' }",
  ),
  'plugin/agent/skills/brief.md': '---\ndescription: Write a brief.\narguments:\n  - name: topic\n    required: true\n    ask: Which topic?\n---\nWrite a brief on {{topic}}.\n',
}

const CODE_HOST = `import { createRoot } from 'seam-runtime'

const root = await createRoot({ dir: new URL('./plugin', import.meta.url).pathname, codeMode: true })
try {
  const turn = await root.beginTurn({ session: 'code', principal: { subjectId: 'user', roles: [] } })
  const names = turn.capabilities.tools.map((t) => t.name)
  const code = 'const d = await tools.double({ n: 2 }); const s = await tools.sum_doubles({ ns: [1, 2, 3] }); console.log("sum", s); return [d, s]'
  const outcome = await turn.tools.execute({ callId: 'r1', name: 'run_code', arguments: JSON.stringify({ code }) })
  const nested = await turn.tools.execute({ callId: 'n1', name: 'sum_doubles', arguments: '{"ns":[5]}' })
  const progress = []
  const crawled = await turn.tools.execute({ callId: 'p1', name: 'crawl', arguments: '{"pages":2}' }, { onProgress: (event) => progress.push(event) })
  await turn.end()
  console.log(JSON.stringify({ names, outcome, nested, crawled, progress }))
} finally {
  await root.close()
}
`

// One host on a shared SQLite file: starts a slow call (argv[3] = 'slow') or waits to take a lease over.
const FENCE_HOST = `import { createRoot, definePlugin, defineTool, sqliteJournal } from 'seam-runtime'
import { z } from 'zod'

const [file, hostId, role] = process.argv.slice(2)
const root = await createRoot({
  journal: sqliteJournal(file, { hostId }),
  leaseMs: 300,
  plugin: definePlugin({
    name: 'fence',
    setup(ctx) {
      ctx.addTool('slow', defineTool({
        description: 'Finishes after ms.',
        input: z.object({ ms: z.number() }),
        approval: 'never',
        execute: ({ ms }) => {
          // The body runs once its tool/call is durable. The host hangs here, outside any write
          // transaction (one stopped inside its heartbeat's would hold the SQLite file's write lock).
          console.log(JSON.stringify({ running: true }))
          process.kill(process.pid, 'SIGSTOP')
          return new Promise((resolve) => setTimeout(() => resolve('slow done'), ms))
        },
      }))
    },
  }),
})
if (role === 'slow') {
  const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u', roles: [] } })
  console.log(JSON.stringify({ turnId: turn.turnId }))
  const outcome = await turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{"ms":1500}' })
  console.log(JSON.stringify({ outcome }))
  await root.close().catch(() => {})
  process.exit(0)
} else {
  console.log(JSON.stringify({ ready: true }))
  process.stdin.resume()
  process.stdin.on('end', async () => {
    await root.close()
    process.exit(0)
  })
}
`

/** A long-running child of the project, its output collected; killed when the test ends. */
function background(args: string[], cwd: string, env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, args, { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
  let text = ''
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => (text += chunk))
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await closed
    }
  })
  return {
    child,
    closed,
    get text() {
      return text
    },
    async until(pattern: RegExp, ms = 60_000): Promise<RegExpMatchArray> {
      const started = Date.now()
      for (;;) {
        const match = text.match(pattern)
        if (match) return match
        if (Date.now() - started > ms || child.exitCode !== null) throw new Error(`no ${pattern} within ${ms} ms; output:\n${text}`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    },
  }
}

/** A JSON-RPC request to a Streamable HTTP MCP endpoint; the response message (JSON or the SSE event carrying it). */
async function mcpRequest(url: string, session: string | undefined, id: number | undefined, method: string, params: unknown) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(session ? { 'mcp-session-id': session } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), method, params }),
  })
  const text = await response.text()
  const sessionId = response.headers.get('mcp-session-id') ?? session
  type Message = { id?: number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: unknown }
  if (id === undefined) return { status: response.status, sessionId, message: undefined, messages: [] as Message[] }
  const messages: Message[] = (response.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as Message)
    : [JSON.parse(text) as Message]
  return { status: response.status, sessionId, message: messages.find((message) => message.id === id), messages }
}

describe('the features of the packed package, from a fresh project', { timeout: 120_000 }, () => {
  let work: string
  let project: string
  let tarball: string
  const seam = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [join(project, 'node_modules/seam-runtime/dist/cli/bin.js'), ...args], { cwd: project, env: { ...process.env, NO_COLOR: '1', ...env } })

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'seam-features-'))
    project = join(work, 'project')
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: repo, maxBuffer: 16 * 1024 * 1024 })
    const [pack] = JSON.parse(stdout) as { filename: string }[]
    if (pack === undefined) throw new Error(`npm pack printed no result: ${stdout}`)
    tarball = join(work, pack.filename)
    await mkdir(project, { recursive: true })
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'features-host', private: true, type: 'module' }))
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...(nodeHasSqlite ? [] : ['--ignore-scripts']), tarball, 'zod@^4'], { cwd: project })
    if (!nodeHasSqlite) {
      // As tarball.test.ts does: better-sqlite3 without its from-source build, the repository's binary copied.
      const version = (JSON.parse(await readFile(join(repo, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }).version
      await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', `better-sqlite3@${version}`], { cwd: project })
      const binary = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'
      await mkdir(dirname(join(project, binary)), { recursive: true })
      await copyFile(join(repo, binary), join(project, binary))
    }
    for (const [name, text] of Object.entries(FILES)) {
      await mkdir(dirname(join(project, name)), { recursive: true })
      await writeFile(join(project, name), text)
    }
  }, 600_000)
  afterAll(() => rm(work, { recursive: true, force: true }))

  it('ships no file that imports vitest, and no test suite', async () => {
    const listing = (await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 })).stdout.split('\n')
    expect(listing.filter((path) => /\.test(-suite)?\.|\/fixtures\//.test(path))).toEqual([])
    const installed = join(project, 'node_modules/seam-runtime')
    const files = (await readdir(installed, { recursive: true, withFileTypes: true })).filter((e) => e.isFile() && /\.(js|ts)$/.test(e.name))
    const importing: string[] = []
    for (const file of files) {
      const text = await readFile(join(file.parentPath, file.name), 'utf8')
      if (/from ['"]vitest['"]|import\(['"]vitest['"]\)/.test(text)) importing.push(join(file.parentPath, file.name))
    }
    expect(importing).toEqual([])
    expect(files.length).toBeGreaterThan(100)
  })

  it('runs Code Mode: run_code in a worker of the installed dist/, QuickJS from its wasm file, nested calls inside and out', async () => {
    // The worker is the built one (not src/ stripped at load), the wasm is a file in node_modules.
    await stat(join(project, 'node_modules/seam-runtime/dist/runtime/code/worker.js'))
    const wasm = (await readdir(join(project, 'node_modules/@jitl/quickjs-wasmfile-release-sync/dist'))).filter((name) => name.endsWith('.wasm'))
    expect(wasm).not.toEqual([])
    await writeFile(join(project, 'code-host.mjs'), CODE_HOST)
    const { stdout, stderr } = await run(process.execPath, ['code-host.mjs'], { cwd: project })
    const result = JSON.parse(stdout) as { names: string[]; outcome: unknown; nested: unknown; crawled: unknown; progress: unknown[] }
    expect(result.names).toEqual(expect.arrayContaining(['greet', 'double', 'sum_doubles', 'run_code']))
    expect(result.outcome).toMatchObject({ name: 'run_code', status: 'completed', value: { value: [4, 12], logs: [{ level: 'log', text: 'sum 12' }] } })
    expect(result.nested).toMatchObject({ status: 'completed', value: 10 })
    expect(result.crawled).toMatchObject({ status: 'completed', value: 2 })
    expect(result.progress).toMatchObject([
      { callId: 'p1', name: 'crawl', done: 1, total: 2, message: 'page 1' },
      { callId: 'p1', name: 'crawl', done: 2, total: 2, message: 'page 2' },
    ])
    expect(stderr).toBe('')
  })

  it('serves seam tools / call / journal / approvals through a running seam dev (.seam/dev.json), and MCP on its HTTP port', async () => {
    const dev = background([join(project, 'node_modules/seam-runtime/dist/cli/bin.js'), 'dev', 'plugin', '--port', '0', '--no-check'], project)
    const [, mcpUrl] = await dev.until(/mcp\s+(http:\/\/\S+)/)
    await dev.until(/watching/)
    const discovery = JSON.parse(await readFile(join(project, 'plugin/.seam/dev.json'), 'utf8')) as { pid: number; url: string; token: string }
    expect(discovery.pid).toBe(dev.child.pid)
    expect((await stat(join(project, 'plugin/.seam/dev.json'))).mode & 0o777).toBe(0o600)

    const tools = await seam(['tools', 'plugin', '--json'])
    expect(tools.stderr).toMatch(/via seam dev at http:\/\/127\.0\.0\.1:\d+, generation 1/)
    expect((JSON.parse(tools.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name).sort()).toEqual(['crawl', 'double', 'greet', 'launch', 'load_skill', 'profile', 'sum_doubles'])

    const call = await seam(['call', 'sum_doubles', '{"ns":[1,2]}', '--dir', 'plugin', '--json'])
    expect(call.stderr).toMatch(/via seam dev/)
    expect(JSON.parse(call.stdout)).toMatchObject({ status: 'completed', value: 6 })

    // No terminal, no console page: dev parks the call instead of denying it.
    const parked = await seam(['call', 'launch', '{"id":"L-1"}', '--dir', 'plugin']).then(
      () => ({ stdout: 'it completed', code: 0 }),
      (e: { stdout: string; code: number }) => e,
    )
    expect(parked.code).toBe(1)
    expect(parked.stdout).toMatch(/suspended APPROVAL_PENDING/)
    const listed = await seam(['approvals', 'plugin', '--json'])
    expect(listed.stderr).toMatch(/via seam dev/)
    const waiting = JSON.parse(listed.stdout) as { callId: string; name?: string; tool?: string }[]
    expect(waiting).toHaveLength(1)
    const decided = await seam(['approvals', 'plugin', '--decide', waiting[0]!.callId, 'allow', '--resume', '--json'])
    expect(decided.stdout).toContain('launched L-1')

    const journal = await seam(['journal', 'plugin', '--json', '--tail', '50'])
    expect(journal.stderr).toMatch(/via seam dev/)
    const events = journal.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; callId?: string; parent?: string; name?: string })
    // The nested calls of sum_doubles are journaled with their parent.
    expect(events.filter((e) => e.kind === 'tool/call' && e.parent !== undefined).length).toBe(2)
    expect(events.some((e) => e.kind === 'approval/decided')).toBe(true)

    // MCP over dev's HTTP port, as a client speaks it on the wire.
    const init = await mcpRequest(mcpUrl!, undefined, 1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'features', version: '1' } })
    expect(init.status).toBe(200)
    expect(init.message?.result).toMatchObject({ serverInfo: { name: expect.any(String) }, capabilities: { tools: expect.any(Object) } })
    await mcpRequest(mcpUrl!, init.sessionId ?? undefined, undefined, 'notifications/initialized', {})
    const list = await mcpRequest(mcpUrl!, init.sessionId ?? undefined, 2, 'tools/list', {})
    const greet = ((list.message?.result?.tools ?? []) as { name: string; inputSchema: unknown }[]).find((t) => t.name === 'greet')
    expect(greet?.inputSchema).toMatchObject({ type: 'object', properties: { name: { type: 'string' } } })
    const called = await mcpRequest(mcpUrl!, init.sessionId ?? undefined, 3, 'tools/call', { name: 'greet', arguments: { name: 'mcp' } })
    expect(JSON.stringify(called.message?.result)).toContain('hello mcp')
    expect(called.message?.result).toMatchObject({ structuredContent: { greeting: 'hello mcp' } })
    expect(called.message?.result?.isError).not.toBe(true)

    const crawl = await mcpRequest(mcpUrl!, init.sessionId ?? undefined, 4, 'tools/call', { name: 'crawl', arguments: { pages: 2 }, _meta: { progressToken: 'p-1' } })
    expect(crawl.message?.result).toMatchObject({ content: [{ type: 'text', text: '2' }] })
    expect(crawl.messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params)).toEqual([
      { progressToken: 'p-1', progress: 1, total: 2, message: 'page 1' },
      { progressToken: 'p-1', progress: 2, total: 2, message: 'page 2' },
    ])

    dev.child.kill('SIGINT')
    expect(await dev.closed).toBe(0)
    await expect(stat(join(project, 'plugin/.seam/dev.json'))).rejects.toThrow()
  })

  it.each(['2025-11-25', '2026-07-28'] as const)('asks the person and samples the model of a %s client of seam dev: a tool body, and a skill argument left out', async (era) => {
    const dev = background([join(project, 'node_modules/seam-runtime/dist/cli/bin.js'), 'dev', 'plugin', '--port', '0', '--no-check'], project)
    onTestFinished(() => {
      dev.child.kill('SIGINT')
    })
    const [, mcpUrl] = await dev.until(/mcp\s+(http:\/\/\S+)/)
    await dev.until(/watching/)
    const asked: string[] = []
    const client = new Client({ name: 'features-asks', version: '1' }, { capabilities: { elicitation: { form: {} }, sampling: {} }, ...(era === '2026-07-28' ? { versionNegotiation: { mode: { pin: era } } } : {}) })
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message)
      const content: Record<string, string> = request.params.message === 'Which topic?' ? { topic: 'tides' } : { name: 'Ada' }
      return { action: 'accept' as const, content }
    })
    client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'Hello, Ada' }, model: 'fixture', stopReason: 'endTurn' }))
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl!)))
    onTestFinished(() => client.close())
    expect(client.getProtocolEra()).toBe(era === '2026-07-28' ? 'modern' : 'legacy')
    const called = await client.callTool({ name: 'profile', arguments: {} })
    expect(called.structuredContent).toEqual({ answer: { action: 'accept', content: { name: 'Ada' } }, said: 'Hello, Ada' })
    const prompt = await client.getPrompt({ name: 'brief', arguments: {} })
    expect(JSON.stringify(prompt.messages)).toContain('Write a brief on tides.')
    expect(asked).toEqual(['Your name?', 'Which topic?'])
    dev.child.kill('SIGINT')
    expect(await dev.closed).toBe(0)
  })

  it('chats with run_code offered: seam chat --code against an OpenAI-compatible endpoint', async () => {
    const code = 'const a = await tools.double({ n: 1 }); const b = await tools.greet({ name: "chat" }); return [a, b.greeting]'
    const server = await modelServer({
      chat: [chatReply(null, [{ id: 'call_1', name: 'run_code', arguments: JSON.stringify({ code }) }]), chatReply('Done.')],
    })
    onTestFinished(() => server.close())
    const chat = background([join(project, 'node_modules/seam-runtime/dist/cli/bin.js'), 'chat', 'plugin', '--code', '--base-url', `${server.url}/v1`, '--model', 'scripted'], project, {
      OPENAI_API_KEY: 'test-key',
    })
    await chat.until(/tools\s+.*run_code/)
    chat.child.stdin!.write('Double one and greet.\n')
    await chat.until(/Done\./)
    chat.child.stdin!.end()
    expect(await chat.closed).toBe(0)
    const offered = (server.requests.chat[0]!.tools as { function: { name: string; description: string } }[]).map((t) => t.function)
    expect(offered.map((t) => t.name)).toContain('run_code')
    expect(offered.find((t) => t.name === 'run_code')!.description).toContain('double(args: {')
    const second = server.requests.chat[1]!.messages as { role: string; content: string }[]
    expect(second.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content))).toEqual([{ value: [2, 'hello chat'], logs: [] }])
    expect(server.refusals).toEqual([])
  })

  it('fences a hung host on a shared SQLite journal: another takes its lease over, its call settles OUTCOME_UNKNOWN', async () => {
    await writeFile(join(project, 'fence-host.mjs'), FENCE_HOST)
    const file = join(work, 'fence.db')
    const b = background(['fence-host.mjs', file, 'host-b', 'wait'], project)
    await b.until(/"ready":true/)
    const a = background(['fence-host.mjs', file, 'host-a', 'slow'], project)
    const [, turnId] = await a.until(/"turnId":"([^"]+)"/)
    await a.until(/"running":true/)
    onTestFinished(() => {
      try {
        process.kill(a.child.pid!, 'SIGCONT')
      } catch {}
    })
    const reader = await import(join(project, 'node_modules/seam-runtime/dist/index.js'))
    const journal = reader.sqliteJournal(file, { hostId: 'reader' }) as { read(turnId: string): Promise<{ kind: string; callId?: string; code?: string; host?: string }[]>; close(): Promise<void> }
    onTestFinished(() => journal.close())
    let result: { code?: string; host?: string } | undefined
    for (const started = Date.now(); result === undefined && Date.now() - started < 20_000; ) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      result = (await journal.read(turnId!)).find((e) => e.kind === 'tool/result' && e.callId === 'c1')
    }
    expect(result).toMatchObject({ code: 'OUTCOME_UNKNOWN', host: 'host-b' })
    process.kill(a.child.pid!, 'SIGCONT')
    const [line] = await a.until(/^\{"outcome":.*$/m)
    expect((JSON.parse(line) as { outcome: unknown }).outcome).toMatchObject({ status: 'failed', code: 'OUTCOME_UNKNOWN' })
    b.child.stdin!.end()
    expect(await b.closed).toBe(0)
  })
})

import { randomUUID } from 'node:crypto'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import pg from 'pg'
import { describe, expect, it, onTestFinished } from 'vitest'
import { chatReply, modelServer } from '../src/adapters/fixtures/model-server.js'
import { createRoot, deferApprovals, type JournalStore, memoryJournal, openTelemetry, postgresJournal, sqliteJournal } from '../src/index.js'
import { pluginFolder, type Run, start, watch } from './cli-kit.js'
import { BROKEN_TOOL, expectClean, filesUnder, KEYED, LEAKY_ARGS, LEAKY_PLUGIN, NEEDLES, SECRET_ENV } from './secrets-kit.js'
import { everything, memorySdk } from './telemetry-kit.js'

// Set before anything reads the environment (a root rescans it when created).
for (const [name, value] of Object.entries(SECRET_ENV)) process.env[name] = value
const PG_URL = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** The calls a model might make with secrets in them: each kind of outcome once. */
const CALLS = [
  { callId: 'c-echo', name: 'echo', arguments: LEAKY_ARGS },
  { callId: 'c-fail', name: 'fail', arguments: LEAKY_ARGS },
  { callId: 'c-blocked', name: 'blocked', arguments: LEAKY_ARGS },
  // The model sends a secret as a tool name.
  { callId: 'c-name', name: NEEDLES[0]!, arguments: '{}' },
  // Parked: its reason (from risk()) names secrets; its arguments are kept exact for the resume.
  { callId: 'c-risky', name: 'risky', arguments: '{"text":"the report"}' },
]

async function runCalls(journal: JournalStore) {
  const dir = await pluginFolder(LEAKY_PLUGIN)
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  const sdk = memorySdk()
  const root = await createRoot({ dir, journal, approval: deferApprovals(), telemetry: openTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider }) })
  onTestFinished(() => root.close())
  const turn = await root.beginTurn({ session: 's1', principal: { subjectId: 'ada', roles: [] } })
  const outcomes = await turn.tools.executeBatch(CALLS)
  expect(outcomes.map((o) => o.code ?? o.status)).toEqual(['completed', 'TOOL_ERROR', 'POST_BLOCKED', 'UNKNOWN_TOOL', 'APPROVAL_PENDING'])
  await turn.end()
  return { root, dir, turnId: turn.turnId, spans: sdk.spans }
}

describe('secrets in the stores and spans of a root', () => {
  it('keeps them out of the memory journal, parked calls and OpenTelemetry spans', async () => {
    const journal = memoryJournal()
    const { root, dir, turnId, spans } = await runCalls(journal)
    // A reload whose tool file throws while loading: its span's status carries the error.
    await writeFile(path.join(dir, 'tools', 'broken.ts'), BROKEN_TOOL)
    expect(await root.reload()).toMatchObject({ ok: false })
    expectClean('memory journal read', JSON.stringify(await journal.read(turnId)))
    expectClean('memory journal tail', JSON.stringify(await journal.tail(50)))
    const pending = await root.approvals.pending()
    expect(pending).toHaveLength(1)
    expectClean('root.approvals.pending()', JSON.stringify(pending))
    expect(spans().length).toBeGreaterThan(4)
    const reload = spans().filter((span) => span.name === 'seam.reload').at(-1)
    expect(reload?.status.message).toContain('cannot start without [redacted]')
    expectClean('OTel spans', everything(spans()) + JSON.stringify(spans().map((s) => [s.name, s.status])))
  })

  it('keeps them out of a SQLite journal, read back and in the file bytes', async () => {
    const folder = await pluginFolder({})
    onTestFinished(() => rm(folder, { recursive: true, force: true }))
    const journal = sqliteJournal(path.join(folder, 'journal.db'))
    const { root, turnId } = await runCalls(journal)
    expectClean('sqlite journal read', JSON.stringify(await journal.read(turnId)))
    expectClean('sqlite journal tail', JSON.stringify(await journal.tail(50)))
    const pending = await root.approvals.pending()
    expectClean('parked rows', JSON.stringify(pending))
    await root.close()
    const files = await filesUnder(folder)
    expect(Object.keys(files).some((file) => file.endsWith('journal.db'))).toBe(true)
    for (const [file, bytes] of Object.entries(files)) expectClean(`the bytes of ${path.basename(file)}`, bytes)
  })

  it('keeps them out of a PostgreSQL journal and every row of its tables', async () => {
    const schema = `seam_secrets_${randomUUID().replaceAll('-', '').slice(0, 12)}`
    const admin = new pg.Client({ connectionString: PG_URL })
    await admin.connect()
    onTestFinished(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    })
    const journal = postgresJournal(PG_URL, { schema })
    const { root, turnId } = await runCalls(journal)
    expectClean('postgres journal read', JSON.stringify(await journal.read(turnId)))
    expectClean('postgres journal tail', JSON.stringify(await journal.tail(50)))
    expectClean('postgres parked rows', JSON.stringify(await root.approvals.pending()))
    const { rows: tables } = await admin.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema])
    expect(tables.length).toBeGreaterThan(2)
    for (const { table_name } of tables) {
      const { rows } = await admin.query(`SELECT * FROM ${schema}.${table_name}`)
      const text = JSON.stringify(rows)
      if (table_name === 'seam_journal_parked') {
        // A resume runs the body with exactly the arguments asked about, so they are the one thing kept as given.
        expect(text).toContain('the report')
      }
      expectClean(`postgres table ${table_name}`, text)
    }
  })
})

/** `seam …` to completion with the secrets in its environment, stdin closed. */
function seamWithSecrets(...args: string[]): Promise<Run> {
  const child = start(args, { ...SECRET_ENV })
  child.stdin?.end()
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk) => (stdout += chunk))
  child.stderr?.on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const terminal = (run: Run) => run.stdout + run.stderr

describe('secrets on the channels of real processes', { timeout: 180_000 }, () => {
  it('keeps them out of seam call, tools, journal, dev (console, MCP, terminal), chat and the files they write', async () => {
    const dir = await pluginFolder(LEAKY_PLUGIN)
    onTestFinished(() => rm(dir, { recursive: true, force: true }))

    // seam call: each kind of outcome, a secret as the tool name, and --debug's stack traces.
    for (const [name, args] of [['echo', LEAKY_ARGS], ['fail', LEAKY_ARGS], ['blocked', LEAKY_ARGS], ['risky', LEAKY_ARGS], [NEEDLES[2]!, '{}']] as const) {
      const run = await seamWithSecrets('call', name, args, '--dir', dir)
      expect(run.code === 0 || run.code === 1, terminal(run)).toBe(true)
      expectClean(`seam call ${name === NEEDLES[2] ? '<secret name>' : name}`, terminal(run), NEEDLES)
    }
    const debug = await seamWithSecrets('--debug', 'call', 'fail', LEAKY_ARGS, '--dir', dir, '--json')
    expect(debug.stdout).toContain('TOOL_ERROR')
    expectClean('seam --debug call --json', terminal(debug), NEEDLES)

    // seam dev: the console's routes, its open question, MCP error texts, a tool file that fails to load.
    const dev = start(['dev', dir, '--port', '0', '--no-check', '--debounce', '30'], { ...SECRET_ENV })
    onTestFinished(() => {
      if (dev.exitCode === null) dev.kill('SIGKILL')
    })
    const devOut = watch(dev)
    const [, base] = await devOut.until(/console\s+(http:\/\/127\.0\.0\.1:\d+)\//)
    const [, mcpUrl] = await devOut.until(/mcp\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/)
    const page = new AbortController()
    onTestFinished(() => page.abort())
    await fetch(`${base}/api/events`, { signal: page.signal })
    const post = (route: string, body: unknown) =>
      fetch(base + route, { method: 'POST', headers: { 'content-type': 'application/json', origin: base! }, body: JSON.stringify(body) })
    const consoleTexts: [string, string][] = []
    for (const tool of ['fail', 'blocked', NEEDLES[3]!]) {
      consoleTexts.push([`/api/try ${tool === NEEDLES[3] ? '<secret name>' : tool}`, await (await post('/api/try', { tool, arguments: LEAKY_ARGS, subjectId: 'ada' })).text()])
    }
    const asking = post('/api/try', { tool: 'risky', arguments: LEAKY_ARGS, subjectId: 'ada' })
    let question: { id: string } | undefined
    for (let tries = 0; tries < 300 && question === undefined; tries += 1) {
      const text = await (await fetch(`${base}/api/approvals`)).text()
      question = (JSON.parse(text) as { pending: { id: string }[] }).pending[0]
      if (question) consoleTexts.push(['/api/approvals', text])
      else await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(question).toBeDefined()
    expect((await post(`/api/approvals/${question!.id}`, { answer: 'rejected' })).status).toBe(200)
    consoleTexts.push(['/api/try risky', await (await asking).text()])

    const client = new Client({ name: 'secrets-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl!)))
    onTestFinished(() => client.close().catch(() => {}))
    const leaky = JSON.parse(LEAKY_ARGS) as Record<string, unknown>
    for (const name of ['fail', 'blocked']) {
      const result = await client.callTool({ name, arguments: leaky })
      expect(result.isError).toBe(true)
      expectClean(`MCP tools/call ${name}`, JSON.stringify(result))
    }
    // An unknown tool is the JSON-RPC error -32602, whose message names the tool: redacted.
    const unknown = await client.callTool({ name: NEEDLES[4]!, arguments: leaky }).then(
      () => undefined,
      (error: unknown) => error as { code?: number; message?: string },
    )
    expect(unknown?.code).toBe(-32602)
    expectClean('MCP tools/call <secret name>', JSON.stringify({ code: unknown?.code, message: unknown?.message }))

    const from = devOut.text.length
    await writeFile(path.join(dir, 'tools', 'broken.ts'), BROKEN_TOOL)
    await devOut.until(/broken\.ts/, from)
    consoleTexts.push(['/api/state', await (await fetch(`${base}/api/state`)).text()])
    expect(consoleTexts.at(-1)![1]).toContain('broken')
    expect(consoleTexts.find(([route]) => route === '/api/approvals')![1]).toContain('[redacted]')
    for (const [route, text] of consoleTexts) expectClean(`console ${route}`, text)
    await client.close()
    page.abort()
    const exited = new Promise((resolve) => dev.once('exit', resolve))
    dev.kill('SIGINT')
    await exited
    expectClean('seam dev terminal', devOut.text, NEEDLES)

    // A command's first generation fails on the broken file: its code frame and message are scrubbed.
    const failing = await seamWithSecrets('tools', dir)
    expect(failing.stderr).toContain('could not build its first generation')
    expectClean('seam tools (broken tool file)', terminal(failing), NEEDLES)
    await rm(path.join(dir, 'tools', 'broken.ts'))

    // seam tools and seam journal.
    for (const args of [['tools', dir], ['tools', dir, '--json'], ['journal', dir, '--json'], ['journal', dir]]) {
      const run = await seamWithSecrets(...args)
      expect(run.code, terminal(run)).toBe(0)
      expectClean(`seam ${args.join(' ').replace(dir, '<dir>')}`, terminal(run), args[0] === 'journal' ? undefined : NEEDLES)
      if (args[0] === 'journal' && args[2] === '--json') expect(run.stdout).toMatch(/TOOL_ERROR[\s\S]*\[redacted\]|\[redacted\][\s\S]*TOOL_ERROR/)
    }

    // seam chat against a local OpenAI-compatible server: what the person types, the calls, the log.
    const model = await modelServer({
      chat: [
        chatReply(null, [
          { id: 'call_1', name: 'fail', arguments: LEAKY_ARGS },
          { id: 'call_2', name: NEEDLES[5]!, arguments: '{}' },
        ]),
        chatReply('Done.'),
      ],
    })
    onTestFinished(() => model.close())
    const chat = start(['chat', dir, '--base-url', `${model.url}/v1`, '--model', 'scripted'], { ...SECRET_ENV })
    onTestFinished(() => {
      if (chat.exitCode === null) chat.kill('SIGKILL')
    })
    const chatOut = watch(chat)
    await chatOut.until(/session\s+chat-/)
    chat.stdin!.write(`my key is ${SECRET_ENV.OPENAI_API_KEY}, the token ${NEEDLES[6]} and password=${KEYED}\n`)
    await chatOut.until(/Done\./)
    const closed = new Promise((resolve) => chat.once('close', resolve))
    chat.stdin!.end()
    await closed
    expect(model.requests.chat).toHaveLength(2)
    expectClean('seam chat terminal', chatOut.text, NEEDLES)

    // The files: the SQLite journal every process wrote (database and WAL bytes) and the chat log.
    const files = await filesUnder(path.join(dir, '.seam'))
    expect(Object.keys(files).some((file) => file.endsWith('.jsonl'))).toBe(true)
    expect(Object.keys(files).some((file) => /\.db$/.test(file))).toBe(true)
    expect(Object.entries(files).find(([file]) => file.endsWith('.jsonl'))![1]).toContain('my key is [redacted]')
    for (const [file, bytes] of Object.entries(files)) expectClean(`the bytes of ${path.relative(dir, file)}`, bytes)
  })
})

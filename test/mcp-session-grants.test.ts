import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Client, type ClientOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { createRoot } from '../src/index.js'
import { sqliteJournal } from '../src/runtime/journal/sqlite.js'
import { type ServePlugin, servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'
import { serveHttp } from '../src/mcp/server/serve.js'

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))
const run = promisify(execFile)

/** A writing tool whose first use in a session asks; an allow holds for the rest of the session. */
const NOTE = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Write a note.',
  input: z.object({ text: z.string() }),
  approval: 'once',
  async execute({ text }) {
    return 'noted ' + text
  },
})
`

const ERAS = {
  '2025-11-25': {},
  '2026-07-28': { versionNegotiation: { mode: { pin: '2026-07-28' } } },
} as const satisfies Record<string, ClientOptions>

const text = (result: { content: unknown }) => (result.content as { text: string }[]).map((c) => c.text).join('\n')

describe('an MCP session grant is one connection', () => {
  let plugin: ServePlugin
  let journalFile: string

  beforeAll(async () => {
    plugin = await servePlugin()
    await plugin.put('tools/note.ts', NOTE)
    journalFile = path.join(plugin.dir, '.seam', 'journal.db')
  })
  afterAll(async () => {
    await plugin.remove()
  })

  /** A client that answers every approval question "allow for the session", and counts them. */
  function answering(options: ClientOptions) {
    const asked: string[] = []
    const client = new Client({ name: 'grants', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, ...options })
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message)
      return { action: 'accept', content: { decision: 'session' } }
    })
    return { client, asked }
  }

  async function stdio(options: ClientOptions) {
    const { client, asked } = answering(options)
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', plugin.dir], stderr: 'ignore' }))
    onTestFinished(() => client.close())
    return { client, asked }
  }

  async function standing() {
    const journal = await sqliteJournal(journalFile)
    try {
      return await journal.coordination.grants()
    } finally {
      await journal.close()
    }
  }

  async function cli(...args: string[]): Promise<string> {
    return (await run(process.execPath, [BIN, 'approvals', plugin.dir, ...args], { env: { ...process.env, NO_COLOR: '1' } })).stdout
  }

  it.each(Object.entries(ERAS))('over stdio (%s): the grant holds for its connection and ends with it; the next seam mcp asks again', { timeout: 60_000 }, async (_era, options) => {
    const first = await stdio(options)
    expect(text(await first.client.callTool({ name: 'note', arguments: { text: 'a' } }))).toBe('noted a')
    expect(text(await first.client.callTool({ name: 'note', arguments: { text: 'b' } }))).toBe('noted b')
    expect(first.asked).toHaveLength(1)
    const held = await standing()
    expect(held).toHaveLength(1)
    expect(held[0]!.session).toMatch(/^mcp:[0-9a-f-]{36}$/)
    await first.client.close()
    await until('the ended connection to drop its grant', async () => (await standing()).length === 0, 10_000)
    const second = await stdio(options)
    expect(text(await second.client.callTool({ name: 'note', arguments: { text: 'c' } }))).toBe('noted c')
    expect(second.asked).toHaveLength(1)
    await second.client.close()
  })

  it('over 2026-07-28 HTTP: a grant ends with the request, so no later client inherits it', { timeout: 60_000 }, async () => {
    const root = await createRoot({ dir: plugin.dir, journal: await sqliteJournal(journalFile) })
    const server = await serveHttp(root, { port: 0 })
    onTestFinished(async () => {
      await server.close()
      await root.close()
    })
    const connect = async () => {
      const c = answering(ERAS['2026-07-28'])
      await c.client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
      onTestFinished(() => c.client.close())
      return c
    }
    const a = await connect()
    expect(text(await a.client.callTool({ name: 'note', arguments: { text: 'd' } }))).toBe('noted d')
    const b = await connect()
    expect(text(await b.client.callTool({ name: 'note', arguments: { text: 'e' } }))).toBe('noted e')
    expect([a.asked.length, b.asked.length]).toEqual([1, 1])
    await until('the requests to drop their grants', async () => (await root.journal.coordination.grants()).length === 0, 5_000)
  })

  it('seam approvals --grants lists a standing grant and --revoke drops it: the connected client is asked again', { timeout: 60_000 }, async () => {
    const { client, asked } = await stdio({})
    await client.callTool({ name: 'note', arguments: { text: 'f' } })
    const [grant] = JSON.parse(await cli('--grants', '--json')) as { id: string; session: string; source: string }[]
    expect(grant).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{12}$/), session: expect.stringMatching(/^mcp:/) })
    expect(await cli('--grants')).toContain(grant!.id)
    await client.callTool({ name: 'note', arguments: { text: 'g' } })
    expect(asked).toHaveLength(1)
    expect(await cli('--revoke', grant!.id)).toContain(`revoked ${grant!.id}`)
    expect(await standing()).toHaveLength(0)
    await client.callTool({ name: 'note', arguments: { text: 'h' } })
    expect(asked).toHaveLength(2)
    await expect(cli('--revoke', 'nope')).rejects.toMatchObject({ stderr: expect.stringContaining('no standing session grant') })
  })
})

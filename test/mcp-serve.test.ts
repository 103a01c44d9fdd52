import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { sqliteJournal } from 'seam-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOOKUP_V2, type ServePlugin, servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'

/** The real command: `seam mcp <dir>` (journal at `<dir>/.seam/journal.db`). */
const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))

const text = (result: { content: unknown }) => (result.content as { text: string }[]).map((c) => c.text).join('\n')

/** The journal the child writes, read through a second connection. */
async function journalTail(file: string, limit = 50) {
  const journal = sqliteJournal(file)
  try {
    return await journal.tail(limit)
  } finally {
    await journal.close()
  }
}

describe('seam mcp: a watched plugin folder over stdio to an MCP client', () => {
  let plugin: ServePlugin
  let journal: string
  let client: Client
  let transport: StdioClientTransport
  let stderr = ''
  const asked: string[] = []

  beforeAll(async () => {
    plugin = await servePlugin()
    journal = path.join(plugin.dir, '.seam', 'journal.db')
    transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', plugin.dir], stderr: 'pipe' })
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    client = new Client({ name: 'stdio-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } })
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message)
      return { action: 'accept', content: { decision: asked.length === 1 ? 'once' : 'reject' } }
    })
    await client.connect(transport)
  })
  afterAll(async () => {
    await client?.close()
    await plugin.remove()
  })

  it('lists the tools and calls one through the pipeline', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(['load_skill', 'lookup', 'slow', 'wipe'])
    const result = await client.callTool({ name: 'lookup', arguments: { id: 3 } })
    expect(result.structuredContent).toEqual({ id: 3, title: 'Printer on fire', status: 'open' })
    const kinds = (await journalTail(journal)).map((e) => e.kind)
    expect(kinds.slice(-3)).toEqual(['turn/begin', 'tool/call', 'tool/result'])
  })

  it('asks through elicitation: the first answer (once) runs the call, the second (reject) denies it', async () => {
    const allowed = await client.callTool({ name: 'wipe', arguments: { id: 5 } })
    expect(text(allowed)).toContain('wiped ticket 5')
    const denied = await client.callTool({ name: 'wipe', arguments: { id: 6 } })
    expect(denied.isError).toBe(true)
    expect(text(denied)).toMatch(/^\[DENIED\] /)
    expect(asked).toHaveLength(2)
    expect(asked[1]).toContain('wipe id=6')
  })

  it('denies a call that needs approval to a client without elicitation', async () => {
    const plain = new Client({ name: 'plain', version: '1.0.0' })
    await plain.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', plugin.dir], stderr: 'ignore' }))
    try {
      const result = await plain.callTool({ name: 'wipe', arguments: { id: 9 } })
      expect(result.isError).toBe(true)
      expect(text(result)).toMatch(/^\[APPROVAL_UNAVAILABLE\] /)
    } finally {
      await plain.close()
    }
  })

  it('cancels a running call: the tool observes the abort and the journal records it cancelled', async () => {
    const marker = path.join(plugin.scratch, 'stdio-cancel')
    const controller = new AbortController()
    const call = client.callTool({ name: 'slow', arguments: { ms: 10_000, marker } }, { signal: controller.signal })
    await until('the slow call to be journaled', async () => (await journalTail(journal, 5)).some((e) => e.kind === 'tool/call' && e.name === 'slow'))
    controller.abort(new Error('stop'))
    await expect(call).rejects.toThrow()
    expect(await until('the marker file', () => readFile(marker, 'utf8').catch(() => ''))).toMatch(/^aborted: /)
    const result = await until('the cancelled result', async () =>
      (await journalTail(journal, 10)).findLast((e) => e.kind === 'tool/result' && e.status === 'cancelled'),
    )
    expect(result).toMatchObject({ code: 'ABORTED' })
  })

  it('sends list_changed after a tool file edit and lists the new schema', async () => {
    let changed = 0
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++
    })
    await plugin.put('tools/lookup.ts', LOOKUP_V2)
    await until('list_changed', () => changed > 0, 10_000)
    const lookup = (await client.listTools()).tools.find((t) => t.name === 'lookup')!
    expect(Object.keys(lookup.inputSchema.properties ?? {})).toEqual(['id', 'verbose'])
    // The server logs after the notification went out: the client may hear it first.
    await until('the publish to be logged', () => /tools list_changed sent to 1 session/.test(stderr))
  })

  it('exits when the client ends the session', async () => {
    const pid = transport.pid!
    await client.close()
    await until('the server process to exit', () => {
      try {
        process.kill(pid, 0)
        return false
      } catch {
        return true
      }
    })
    expect(stderr).toContain('mcp stdio: the session ended')
  })
})

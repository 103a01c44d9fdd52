import { fileURLToPath } from 'node:url'
import { Client, type ClientOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoot, type Root } from '../src/index.js'
import { LOOKUP_V2, type ServePlugin, servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'
import { serveHttp } from '../src/mcp/server/serve.js'

/** The real command for stdio: `seam mcp <dir>`. */
const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))

const ERAS = {
  '2025-11-25': { era: 'legacy', options: {} },
  '2026-07-28': { era: 'modern', options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
} as const satisfies Record<string, { era: string; options: ClientOptions }>

const text = (result: { content: unknown }) => (result.content as { text: string }[]).map((c) => c.text).join('\n')

/**
 * The official client in each protocol era, over stdio (`seam mcp`) and streamable HTTP (what
 * `seam dev` serves): it lists, calls, is asked for approval and answers, and hears catalog changes.
 */
describe.each(Object.entries(ERAS))('the official client in the %s era', (revision, { era, options }) => {
  describe.each(['stdio', 'http'] as const)('over %s', (transport) => {
    let plugin: ServePlugin
    let root: Root | undefined
    let http: { url: string; close(): Promise<void> } | undefined
    let client: Client
    const answers: string[] = []
    const asked: string[] = []

    beforeAll(async () => {
      plugin = await servePlugin()
      client = new Client({ name: `eras-${transport}`, version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, ...options })
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params.message)
        const decision = answers.shift()
        return decision === 'decline' ? { action: 'decline' } : { action: 'accept', content: { decision: decision ?? 'reject' } }
      })
      if (transport === 'stdio') {
        await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', plugin.dir], stderr: 'ignore' }))
      } else {
        root = await createRoot({ dir: plugin.dir, watch: true })
        http = await serveHttp(root, { port: 0 })
        await client.connect(new StreamableHTTPClientTransport(new URL(http.url)))
      }
    })
    afterAll(async () => {
      await client?.close()
      await http?.close()
      await root?.close()
      await plugin?.remove()
    })

    it(`speaks ${revision}`, () => {
      expect(client.getProtocolEra()).toBe(era)
    })

    it('lists the tools and calls one through the pipeline', async () => {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name).sort()).toEqual(['load_skill', 'lookup', 'slow', 'wipe'])
      const result = await client.callTool({ name: 'lookup', arguments: { id: 3 } })
      expect(result.structuredContent).toEqual({ id: 3, title: 'Printer on fire', status: 'open' })
    })

    it('asks for approval: an allowed call runs, a rejected and a declined one are denied', async () => {
      answers.push('once', 'reject', 'decline')
      const allowed = await client.callTool({ name: 'wipe', arguments: { id: 5 } })
      expect(text(allowed)).toBe('wiped ticket 5')
      expect(asked.at(-1)).toContain('wipe id=5')
      const rejected = await client.callTool({ name: 'wipe', arguments: { id: 6 } })
      expect(rejected.isError).toBe(true)
      expect(text(rejected)).toMatch(/^\[DENIED\] /)
      const declined = await client.callTool({ name: 'wipe', arguments: { id: 7 } })
      expect(text(declined)).toMatch(/^\[DENIED\] /)
      expect(asked).toHaveLength(3)
    })

    it('hears a catalog change and lists the new schema', async () => {
      let changed = 0
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        changed++
      })
      // 2026-07-28 has no unsolicited notifications: changes arrive on a subscriptions/listen stream.
      const subscription = era === 'modern' ? await client.listen({ toolsListChanged: true }) : undefined
      try {
        await plugin.put('tools/lookup.ts', LOOKUP_V2)
        await until('the change notification', () => changed > 0, 10_000)
        const lookup = (await client.listTools()).tools.find((t) => t.name === 'lookup')!
        expect(Object.keys(lookup.inputSchema.properties ?? {})).toEqual(['id', 'verbose'])
      } finally {
        await subscription?.close()
      }
    })
  })
})

import { fileURLToPath } from 'node:url'
import { Client, type ClientOptions, type Progress, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import type { Transport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoot, type Root } from '../src/index.js'
import { type ServePlugin, servePlugin } from '../src/mcp/fixtures/serve-plugin.js'
import { serveHttp } from '../src/mcp/server/serve.js'

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))

const ERAS = {
  '2025-11-25': { era: 'legacy', options: {} },
  '2026-07-28': { era: 'modern', options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
} as const satisfies Record<string, { era: string; options: ClientOptions }>

/** Five steps 120 ms apart, a message on some: every one outlasts the throttle, so each is sent. */
const CRAWL = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Crawl some pages slowly, reporting each.',
  input: z.object({ pages: z.number().int() }),
  approval: 'never',
  async execute({ pages }, ctx) {
    for (let done = 1; done <= pages; done++) {
      await new Promise((resolve) => setTimeout(resolve, 120))
      ctx.progress({ done, total: pages, ...(done % 2 === 1 ? { message: 'page ' + done } : {}) })
    }
    return 'crawled ' + pages
  },
})
`

/** A served call's ctx.progress() reaches the official client's `onprogress`, in both eras, over stdio and HTTP. */
describe.each(Object.entries(ERAS))('progress to the official client in the %s era', (_revision, { era, options }) => {
  describe.each(['stdio', 'http'] as const)('over %s', (transport) => {
    let plugin: ServePlugin
    let root: Root | undefined
    let http: { url: string; close(): Promise<void> } | undefined
    let client: Client
    const received: { method?: string; params?: Progress; result?: unknown }[] = []

    beforeAll(async () => {
      plugin = await servePlugin()
      await plugin.put('tools/crawl.ts', CRAWL)
      client = new Client({ name: `progress-${transport}`, version: '1.0.0' }, options)
      let wire: Transport
      if (transport === 'stdio') {
        wire = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', plugin.dir], stderr: 'ignore' })
      } else {
        root = await createRoot({ dir: plugin.dir })
        http = await serveHttp(root, { port: 0 })
        wire = new StreamableHTTPClientTransport(new URL(http.url))
      }
      await client.connect(wire)
      // Every message as it arrives, before the client handles it: the client runs notification
      // handlers a microtask late and a response at once, so a report that arrives in the same read
      // as the result is dropped by the client, though the server sent it first.
      const deliver = wire.onmessage!
      wire.onmessage = (message, extra) => {
        received.push(message as { method?: string; params?: Progress; result?: unknown })
        deliver(message, extra)
      }
    })
    afterAll(async () => {
      await client?.close()
      await http?.close()
      await root?.close()
      await plugin?.remove()
    })

    it('sends every report as notifications/progress on its token, before the result, and the client hears them', async () => {
      expect(client.getProtocolEra()).toBe(era)
      const heard: Progress[] = []
      received.length = 0
      const result = await client.callTool({ name: 'crawl', arguments: { pages: 5 } }, { onprogress: (progress) => heard.push(progress) })
      expect((result.content as { text: string }[])[0]!.text).toBe('crawled 5')
      const answeredAt = received.findIndex((message) => message.result !== undefined)
      const sent = received
        .slice(0, answeredAt)
        .filter((message) => message.method === 'notifications/progress')
        .map(({ params }) => ({ progress: params!.progress, total: params!.total, ...(params!.message === undefined ? {} : { message: params!.message }) }))
      const reports = [
        { progress: 1, total: 5, message: 'page 1' },
        { progress: 2, total: 5 },
        { progress: 3, total: 5, message: 'page 3' },
        { progress: 4, total: 5 },
        { progress: 5, total: 5, message: 'page 5' },
      ]
      expect(sent).toEqual(reports)
      // All of them, unless the last arrived in one read with the result (the client's race above).
      expect(heard.length).toBeGreaterThanOrEqual(4)
      expect(heard).toEqual(reports.slice(0, heard.length))
    })

    it('runs a call whose request carries no progress token as before', async () => {
      const result = await client.callTool({ name: 'crawl', arguments: { pages: 2 } })
      expect((result.content as { text: string }[])[0]!.text).toBe('crawled 2')
    })
  })
})

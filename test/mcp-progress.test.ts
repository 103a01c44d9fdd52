import { fileURLToPath } from 'node:url'
import { Client, type ClientOptions, type Progress, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
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

    beforeAll(async () => {
      plugin = await servePlugin()
      await plugin.put('tools/crawl.ts', CRAWL)
      client = new Client({ name: `progress-${transport}`, version: '1.0.0' }, options)
      if (transport === 'stdio') {
        await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', plugin.dir], stderr: 'ignore' }))
      } else {
        root = await createRoot({ dir: plugin.dir })
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

    it('hears every report as notifications/progress on its token, before the result', async () => {
      expect(client.getProtocolEra()).toBe(era)
      const heard: Progress[] = []
      const result = await client.callTool({ name: 'crawl', arguments: { pages: 5 } }, { onprogress: (progress) => heard.push(progress) })
      expect((result.content as { text: string }[])[0]!.text).toBe('crawled 5')
      expect(heard).toEqual([
        { progress: 1, total: 5, message: 'page 1' },
        { progress: 2, total: 5 },
        { progress: 3, total: 5, message: 'page 3' },
        { progress: 4, total: 5 },
        { progress: 5, total: 5, message: 'page 5' },
      ])
    })

    it('runs a call whose request carries no progress token as before', async () => {
      const result = await client.callTool({ name: 'crawl', arguments: { pages: 2 } })
      expect((result.content as { text: string }[])[0]!.text).toBe('crawled 2')
    })
  })
})

import { fileURLToPath } from 'node:url'
import { Client, type ElicitRequest, type ElicitResult, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoot, type Root } from '../src/index.js'
import { type ServePlugin, servePlugin } from '../src/mcp/fixtures/serve-plugin.js'
import { serveHttp } from '../src/mcp/server/serve.js'
import { EVERY_SHAPE } from './question-shapes.js'

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))

/** Asks one question with every field shape and returns the answer it got. */
const PROFILE = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Set up a profile, asking the user for it.',
  input: z.object({}),
  approval: 'never',
  async execute(_args, ctx) {
    return await ctx.ask({ message: 'Your profile, please.', schema: ${JSON.stringify(EVERY_SHAPE)} })
  },
})
`

const text = (result: { content: unknown }) => (result.content as { text: string }[]).map((c) => c.text).join('\n')

describe.each(['stdio', 'http'] as const)('a tool’s question to the official client over %s', (transport) => {
  let plugin: ServePlugin
  let root: Root | undefined
  let http: { url: string; close(): Promise<void> } | undefined
  const clients: Client[] = []
  const replies: ElicitResult[] = []
  const asked: ElicitRequest['params'][] = []

  async function connect(options: ConstructorParameters<typeof Client>[1]): Promise<Client> {
    const client = new Client({ name: `questions-${transport}`, version: '1.0.0' }, options)
    clients.push(client)
    if (options?.capabilities?.elicitation) {
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params)
        return replies.shift() ?? { action: 'cancel' }
      })
    }
    if (transport === 'stdio') await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', plugin.dir], stderr: 'ignore' }))
    else await client.connect(new StreamableHTTPClientTransport(new URL(http!.url)))
    return client
  }

  beforeAll(async () => {
    plugin = await servePlugin()
    await plugin.put('tools/profile.ts', PROFILE)
    if (transport === 'http') {
      root = await createRoot({ dir: plugin.dir })
      http = await serveHttp(root, { port: 0 })
    }
  })
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {})
    await http?.close()
    await root?.close()
    await plugin?.remove()
  })

  it('asks a 2025-11-25 client through elicitation/create with every schema shape, and the tool gets the checked answer', async () => {
    const client = await connect({ capabilities: { elicitation: { form: {} } } })
    expect(client.getProtocolEra()).toBe('legacy')
    replies.push({ action: 'accept', content: { name: 'Ada', email: 'ada@example.org', age: 36, plan: 'pro', region: 'us', legacy: 'a', colors: ['g'] } })
    const accepted = await client.callTool({ name: 'profile', arguments: {} })
    expect(asked.at(-1)).toMatchObject({ message: 'Your profile, please.', requestedSchema: EVERY_SHAPE })
    expect(JSON.parse(text(accepted))).toEqual({
      action: 'accept',
      content: { name: 'Ada', email: 'ada@example.org', age: 36, ratio: 0.5, subscribe: true, plan: 'pro', region: 'us', legacy: 'a', tags: ['x'], colors: ['g'] },
    })
    replies.push({ action: 'decline' })
    expect(JSON.parse(text(await client.callTool({ name: 'profile', arguments: {} })))).toEqual({ action: 'decline' })
    replies.push({ action: 'cancel' })
    expect(JSON.parse(text(await client.callTool({ name: 'profile', arguments: {} })))).toEqual({ action: 'cancel' })
    // An answer outside the schema (a plan it does not offer) reaches the tool as a decline.
    replies.push({ action: 'accept', content: { name: 'Ada', plan: 'enterprise' } })
    expect(JSON.parse(text(await client.callTool({ name: 'profile', arguments: {} })))).toEqual({ action: 'decline' })
  })

  it('asks a 2026-07-28 client in an input_required round, which its elicitation handler answers, and the tool gets the answer', async () => {
    const before = asked.length
    const client = await connect({ capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } })
    expect(client.getProtocolEra()).toBe('modern')
    replies.push({ action: 'accept', content: { name: 'Ada', plan: 'pro' } })
    const answered = JSON.parse(text(await client.callTool({ name: 'profile', arguments: {} })))
    expect(answered).toMatchObject({ action: 'accept', content: { name: 'Ada', plan: 'pro' } })
    expect(asked.length).toBe(before + 1)
    expect(asked.at(-1)).toMatchObject({ message: 'Your profile, please.' })
  })

  it('declines at once for a client that cannot be asked', async () => {
    const before = asked.length
    const client = await connect({})
    expect(JSON.parse(text(await client.callTool({ name: 'profile', arguments: {} })))).toEqual({ action: 'decline' })
    expect(asked.length).toBe(before)
  })
})

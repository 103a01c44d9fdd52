import { Client, type ClientOptions, LOG_LEVEL_META_KEY, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { createRoot, defineTool, type Root } from '../src/index.js'
import { type ServePlugin, servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'
import { serveHttp } from '../src/mcp/server/serve.js'

const ERAS = {
  '2025-11-25': {},
  '2026-07-28': { versionNegotiation: { mode: { pin: '2026-07-28' } } },
} as const satisfies Record<string, ClientOptions>

const CHATTY = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Logs while it runs.',
  input: z.object({}),
  approval: 'never',
  async execute(_args, ctx) {
    ctx.log.debug('looking closely')
    ctx.log.info('started', { step: 1 })
    ctx.log.warn('token sk-live-0123456789abcdef0123 seen')
    return 'done'
  },
})
`

const ROUTED = `
import { defineTool } from 'seam-runtime'
export default defineTool({
  description: 'Looks a region up; the region travels in a header too.',
  input: {
    type: 'object',
    properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, note: { type: 'string' } },
    required: ['region'],
  },
  approval: 'never',
  execute: ({ region }) => 'region ' + region,
})
`

const NEEDY = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Needs a client that can sample.',
  input: z.object({}),
  approval: 'never',
  clientCapabilities: ['sampling'],
  execute: () => 'sampled',
})
`

describe('defineTool clientCapabilities', () => {
  it('accepts the MCP client capabilities a tool may need and refuses anything else', () => {
    const spec = { description: 'd', input: z.object({}), execute: () => 'x' }
    expect(defineTool({ ...spec, clientCapabilities: ['sampling', 'roots'] }).clientCapabilities).toEqual(['sampling', 'roots'])
    expect(() => defineTool({ ...spec, clientCapabilities: ['telepathy'] as never })).toThrow(expect.objectContaining({ code: 'INVALID_TOOL' }))
    expect(() => defineTool({ ...spec, clientCapabilities: 'sampling' as never })).toThrow(expect.objectContaining({ code: 'INVALID_TOOL' }))
  })
})

/**
 * The wire details the conformance suite checks, each through the official client over
 * streamable HTTP (what \`seam dev\` serves), in both eras where the era has them.
 */
describe('serveHttp: wire details', () => {
  let plugin: ServePlugin
  let root: Root
  let server: { url: string; close(): Promise<void> }

  beforeAll(async () => {
    plugin = await servePlugin()
    await plugin.put('tools/chatty.ts', CHATTY)
    await plugin.put('tools/routed.ts', ROUTED)
    await plugin.put('tools/needy.ts', NEEDY)
    root = await createRoot({ dir: plugin.dir })
    server = await serveHttp(root, { port: 0 })
  })
  afterAll(async () => {
    await server.close()
    await root.close()
    await plugin.remove()
  })

  async function connect(options: ClientOptions, fetch?: typeof globalThis.fetch): Promise<Client> {
    const client = new Client({ name: 'wire-test', version: '1.0.0' }, options)
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), fetch ? { fetch } : {}))
    onTestFinished(() => client.close())
    return client
  }

  describe.each(Object.entries(ERAS))('in the %s era', (_revision, options) => {
    it('answers a call to an unknown tool with the JSON-RPC error -32602, not a result', async () => {
      const client = await connect(options)
      const error = await client.callTool({ name: 'nope', arguments: {} }).then(
        () => undefined,
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(ProtocolError)
      expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: nope') })
    })

    it('completes a served prompt argument (no values yet) and refuses an unknown prompt', async () => {
      const client = await connect(options)
      expect(client.getServerCapabilities()?.completions).toEqual({})
      const known = await client.complete({ ref: { type: 'ref/prompt', name: 'triage' }, argument: { name: 'ticket', value: 'pr' } })
      expect(known.completion).toEqual({ values: [], hasMore: false })
      await expect(client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } })).rejects.toMatchObject({
        code: -32602,
      })
    })
  })

  describe.each(Object.entries(ERAS))('in the %s era', (revision, options) => {
    it('refuses a tool that needs an undeclared client capability with -32021, before it runs, and runs it for a client that declared it', async () => {
      const statuses: number[] = []
      const watching: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        if (typeof init?.body === 'string' && init.body.includes('"tools/call"')) statuses.push(response.status)
        return response
      }
      const before = (await root.journal.tail(200)).filter((event) => event.kind === 'tool/call').length
      const bare = await connect(options, watching)
      const error = await bare.callTool({ name: 'needy', arguments: {} }).then(
        () => undefined,
        (caught: unknown) => caught,
      )
      expect(error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } })
      // Over HTTP the specification answers this error with 400 in the 2026-07-28 era.
      if (revision === '2026-07-28') expect(statuses).toEqual([400])
      expect((await root.journal.tail(200)).filter((event) => event.kind === 'tool/call').length).toBe(before)
      const able = await connect({ ...options, capabilities: { sampling: {} } })
      const result = await able.callTool({ name: 'needy', arguments: {} })
      expect(result.content).toEqual([{ type: 'text', text: 'sampled' }])
    })
  })

  it('2025-11-25: sends ctx.log lines at or above the level set with logging/setLevel, redacted, as the call runs', async () => {
    const client = await connect({})
    const seen: { level: string; data: unknown; logger?: string }[] = []
    client.setNotificationHandler('notifications/message', (notification) => {
      seen.push(notification.params)
    })
    await client.setLoggingLevel('info')
    const result = await client.callTool({ name: 'chatty', arguments: {} })
    expect(result.isError).toBeFalsy()
    await until('two log lines', () => seen.length >= 2)
    expect(seen.map((line) => line.level)).toEqual(['info', 'warning'])
    expect(seen[0]).toEqual({ level: 'info', data: { message: 'started', step: 1 }, logger: 'seam' })
    expect(JSON.stringify(seen[1]!.data)).not.toContain('sk-live-0123456789abcdef0123')
  })

  it("2026-07-28: sends ctx.log lines at or above the level a request's _meta carries, and none to a request without one", async () => {
    const client = await connect(ERAS['2026-07-28'])
    const seen: { level: string; data: unknown }[] = []
    client.setNotificationHandler('notifications/message', (notification) => {
      seen.push(notification.params)
    })
    await client.callTool({ name: 'chatty', arguments: {} })
    expect(seen).toEqual([])
    const result = await client.callTool({ name: 'chatty', arguments: {}, _meta: { [LOG_LEVEL_META_KEY]: 'warning' } })
    expect(result.isError).toBeFalsy()
    await until('the warning', () => seen.length >= 1)
    expect(seen.map((line) => line.level)).toEqual(['warning'])
  })

  it('2026-07-28: mirrors a tool parameter into its Mcp-Param header and accepts the call', async () => {
    const sent: (string | null)[] = []
    const spy: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      if (headers.get('mcp-method') === 'tools/call') sent.push(headers.get('mcp-param-region'))
      return fetch(input, init)
    }
    const client = await connect(ERAS['2026-07-28'], spy)
    // The client learns which parameters are mirrored from tools/list.
    await client.listTools()
    const result = await client.callTool({ name: 'routed', arguments: { region: 'us-west1' } })
    expect(result.content).toEqual([{ type: 'text', text: 'region us-west1' }])
    expect(sent).toEqual(['us-west1'])
  })

  it.each([
    ['a mismatched', (headers: Headers) => headers.set('mcp-param-region', 'eu-north1')],
    ['a missing', (headers: Headers) => headers.delete('mcp-param-region')],
    ['a badly encoded', (headers: Headers) => headers.set('mcp-param-region', '=?base64?not*base64?=')],
  ])('2026-07-28: refuses a call with %s Mcp-Param header: HTTP 400 and -32020, before it runs', async (_what, tamper) => {
    const statuses: number[] = []
    const tampering: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers)
      if (headers.get('mcp-method') === 'tools/call') tamper(headers)
      const response = await fetch(input, { ...init, headers })
      if (headers.get('mcp-method') === 'tools/call') statuses.push(response.status)
      return response
    }
    const before = (await root.journal.tail(200)).filter((event) => event.kind === 'tool/call').length
    const client = await connect(ERAS['2026-07-28'], tampering)
    await client.listTools()
    await expect(client.callTool({ name: 'routed', arguments: { region: 'us-west1' } })).rejects.toMatchObject({ code: -32020 })
    expect(statuses.length).toBeGreaterThan(0)
    expect(statuses.every((status) => status === 400)).toBe(true)
    expect((await root.journal.tail(200)).filter((event) => event.kind === 'tool/call').length).toBe(before)
  })

  it('2026-07-28: a Base64-encoded Mcp-Param header that decodes to the argument is accepted', async () => {
    const encoding: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      if (headers.get('mcp-method') === 'tools/call') headers.set('mcp-param-region', `=?base64?${Buffer.from('us-west1').toString('base64')}?=`)
      return fetch(input, { ...init, headers })
    }
    const client = await connect(ERAS['2026-07-28'], encoding)
    const result = await client.callTool({ name: 'routed', arguments: { region: 'us-west1' } })
    expect(result.content).toEqual([{ type: 'text', text: 'region us-west1' }])
  })
})

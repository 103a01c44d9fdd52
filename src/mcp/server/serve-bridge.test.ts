import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/server'
import { createRoot, definePlugin, defineTool, memoryJournal } from 'seam-runtime'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { McpBridge } from './serve-bridge.js'

/** A raw JSON-RPC peer: sends what a test writes, collects the responses by id. */
async function rawSession() {
  const journal = memoryJournal()
  const root = await createRoot({
    journal,
    plugin: definePlugin({
      name: 'p',
      setup(ctx) {
        ctx.addTool('echo', defineTool({ description: 'Echo.', input: z.object({ text: z.string() }), approval: 'never', execute: ({ text }) => text }))
      },
    }),
  })
  const bridge = new McpBridge(root)
  const [client, server] = InMemoryTransport.createLinkedPair()
  const responses: JSONRPCMessage[] = []
  client.onmessage = (message) => {
    responses.push(message)
  }
  await bridge.open('s').connect(server)
  await client.start()
  onTestFinished(async () => {
    await bridge.close()
    await root.close()
  })
  const request = async (id: string | number, method: string, params: Record<string, unknown>) => {
    await client.send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage)
    for (let i = 0; i < 200; i++) {
      const found = responses.findIndex((r) => 'id' in r && r.id === id)
      if (found >= 0) return responses.splice(found, 1)[0] as { result?: { content: { text: string }[]; isError?: boolean } }
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    throw new Error(`no response to ${String(id)}`)
  }
  await request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })
  await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JSONRPCMessage)
  return { request, journal }
}

describe('McpBridge call ids', () => {
  it('serves a JSON-RPC id again once its request was answered, and 1 and "1" as two calls', async () => {
    const { request } = await rawSession()
    for (const id of [7, 7, 1, '1']) {
      const response = await request(id, 'tools/call', { name: 'echo', arguments: { text: `call ${String(id)}` } })
      expect(response.result?.isError).toBeUndefined()
      expect(response.result?.content[0]?.text).toBe(`call ${String(id)}`)
    }
  })

  it('journals a client id with control characters escaped and cut short', async () => {
    const { request, journal } = await rawSession()
    const id = `\u001b[2J\u001b[31mPWNED\u001b[0m${'x'.repeat(100)}`
    await request(id, 'tools/call', { name: 'echo', arguments: { text: 'hi' } })
    const [call] = (await journal.tail(10)).filter((event) => event.kind === 'tool/call') as { callId: string }[]
    expect(call?.callId).toMatch(/^mcp-\d+\."\\u001b\[2J/)
    expect([...(call?.callId ?? '')].some((c) => c.charCodeAt(0) < 0x20)).toBe(false)
    expect(call?.callId.length).toBeLessThan(60)
  })
})

describe('McpBridge with Code Mode', () => {
  it('lists run_code when the root offers it, and a tools/call of it runs the program through the pipeline', async () => {
    const journal = memoryJournal()
    const root = await createRoot({
      journal,
      codeMode: true,
      plugin: definePlugin({
        name: 'p',
        setup(ctx) {
          ctx.addTool('echo', defineTool({ description: 'Echo.', input: z.object({ text: z.string() }), approval: 'never', execute: ({ text }) => text }))
        },
      }),
    })
    const bridge = new McpBridge(root)
    onTestFinished(async () => {
      await bridge.close()
      await root.close()
    })
    const catalog = await bridge.catalog()
    const listed = catalog.tools.find((tool) => tool.name === 'run_code')
    expect(listed?.description).toContain('echo(args: {')
    const [client, server] = InMemoryTransport.createLinkedPair()
    const responses: JSONRPCMessage[] = []
    client.onmessage = (message) => {
      responses.push(message)
    }
    await bridge.open('s').connect(server)
    await client.start()
    const request = async (id: number, method: string, params: Record<string, unknown>) => {
      await client.send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage)
      for (let i = 0; i < 400; i++) {
        const found = responses.findIndex((r) => 'id' in r && r.id === id)
        if (found >= 0) return responses.splice(found, 1)[0] as { result?: { content: { text: string }[]; isError?: boolean } }
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      throw new Error(`no response to ${id}`)
    }
    await request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })
    await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JSONRPCMessage)
    const response = await request(1, 'tools/call', { name: 'run_code', arguments: { code: 'return [await tools.echo({ text: "a" }), await tools.echo({ text: "b" })]' } })
    expect(response.result?.isError).toBeUndefined()
    expect(JSON.parse(response.result!.content[0]!.text)).toEqual({ value: ['a', 'b'], logs: [] })
    const calls = (await journal.tail(50)).filter((event) => event.kind === 'tool/call') as { name: string; parent?: string; callId: string }[]
    expect(calls.map((call) => [call.name, call.parent === undefined ? undefined : 'nested'])).toEqual([
      ['run_code', undefined],
      ['echo', 'nested'],
      ['echo', 'nested'],
    ])
  })
})

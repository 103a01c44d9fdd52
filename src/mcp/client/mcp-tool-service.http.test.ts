import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import { type HttpFixture, startHttpFixture } from '../fixtures/http-server.js'
import { contextWith, waitFor } from '../fixtures/test-helpers.js'
import { McpToolService } from './mcp-tool-service.js'

const SECRET = 'sk-http-header-0123456789'

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

describe('McpToolService over streamable HTTP against an in-process fixture server', () => {
  let fixture: HttpFixture
  let service: McpToolService

  beforeAll(async () => {
    fixture = await startHttpFixture()
    service = new McpToolService({ id: 'remote', transport: { url: fixture.url, headers: { 'x-api-key': SECRET } } })
    await service.connect()
  })
  afterAll(async () => {
    await service.dispose()
    await fixture.close()
  })

  it('lists and calls tools, sending the configured headers', async () => {
    const names = (await service.schema('global')).map((schema) => schema.function.name)
    expect(names).toEqual(expect.arrayContaining(['echo', 'slow', 'add_tool']))
    expect(await service.execute('global', 'echo', { text: 'over http' })).toEqual({
      success: true,
      content: [{ type: 'text', text: 'echo: over http' }],
    })
    expect(fixture.seenHeaders.every((headers) => headers.get('x-api-key') === SECRET)).toBe(true)
    expect(service.description).toBe(`MCP server "remote" (${fixture.url})`)
  })

  it('hears list_changed on the session stream and tells listeners', async () => {
    let changes = 0
    onTestFinished(service.onDidChange(() => changes++))
    await service.execute('global', 'add_tool', { name: 'http_tool' })
    await waitFor('a change notification', () => changes > 0)
    expect((await service.schema('global')).some((schema) => schema.function.name === 'http_tool')).toBe(true)
  })

  it('cancels a call on the server when the caller aborts', async () => {
    const before = fixture.state.cancelled.length
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('stop')), 100)
    await expect(
      service.execute('global', 'slow', { ms: 10_000 }, contextWith(controller.signal)),
    ).rejects.toThrow('stop')
    await waitFor('the server to see the cancellation', () => fixture.state.cancelled.length === before + 1)
  })
})

describe('McpToolService over streamable HTTP when the server goes away', () => {
  it('goes down when the server stops and reconnects when it is back', async () => {
    let fixture = await startHttpFixture()
    const port = fixture.port
    const service = new McpToolService({
      id: 'flaky',
      transport: { url: fixture.url, headers: { authorization: `Bearer ${SECRET}` } },
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    })
    onTestFinished(async () => {
      await service.dispose()
      await fixture.close()
    })
    await service.connect()
    const seen: string[] = []
    service.onDidChange(() => seen.push(service.status))

    await fixture.close()
    await waitFor('status down', () => service.status === 'down' || service.status === 'connecting')
    const error = await service.schema('global').catch((caught: unknown) => caught)
    expect(SeamError.is(error, 'PROVIDER_UNAVAILABLE')).toBe(true)
    expect(`${(error as Error).message} ${service.diagnostic}`).not.toContain(SECRET)

    fixture = await startHttpFixture(port)
    await waitFor('the recovery to be announced', () => seen.at(-1) === 'connected')
    expect(seen[0]).not.toBe('connected')
    expect((await service.schema('global')).length).toBeGreaterThan(0)
  })

  it('rejects connect() to an unreachable URL without leaking header or query secrets', async () => {
    const url = `http://127.0.0.1:${await freePort()}/mcp?token=${SECRET}`
    const service = new McpToolService({ id: 'nowhere', transport: { url, headers: { authorization: `Bearer ${SECRET}` } } })
    onTestFinished(() => service.dispose())
    const error = (await service.connect().catch((caught: unknown) => caught)) as SeamError
    expect(error.code).toBe('PROVIDER_UNAVAILABLE')
    expect(service.description).not.toContain(SECRET)
    for (const text of [error.message, service.diagnostic ?? '', String(error.cause ?? '')]) {
      expect(text).not.toContain(SECRET)
    }
  })
})

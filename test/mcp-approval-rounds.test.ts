import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createRoot } from '../src/index.js'
import { servePlugin } from '../src/mcp/fixtures/serve-plugin.js'
import { serveHttp } from '../src/mcp/server/serve.js'

const text = (result: { content: unknown }) => (result.content as { text: string }[]).map((c) => c.text).join('\n')

/**
 * A 2026-07-28 client over real HTTP whose `fetch` may rewrite the retry of an approval round (the
 * request carrying `requestState`) before it leaves: what a client that changed its mind between
 * the rounds, or a tampering one, sends.
 */
async function modernClient(rewrite: (args: Record<string, unknown>) => Record<string, unknown> | undefined, options: { ttlMs?: number; answerAfterMs?: number } = {}) {
  const plugin = await servePlugin()
  onTestFinished(() => plugin.remove())
  const root = await createRoot({ dir: plugin.dir, ...(options.ttlMs === undefined ? {} : { defaults: { approvalTtlMs: options.ttlMs } }) })
  onTestFinished(() => root.close())
  const http = await serveHttp(root, { port: 0 })
  onTestFinished(() => http.close())
  const client = new Client(
    { name: 'rounds', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  client.setRequestHandler('elicitation/create', async () => {
    await new Promise((resolve) => setTimeout(resolve, options.answerAfterMs ?? 0))
    return { action: 'accept', content: { decision: 'once' } }
  })
  const retries: unknown[] = []
  const fetcher: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string' && init.body.includes('"requestState"')) {
      const message = JSON.parse(init.body) as { params: { arguments?: Record<string, unknown>; requestState?: string } }
      retries.push(message.params.arguments)
      const changed = rewrite(message.params.arguments ?? {})
      if (changed !== undefined) return fetch(input, { ...init, body: JSON.stringify({ ...message, params: { ...message.params, arguments: changed } }) })
    }
    return fetch(input, init)
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url), { fetch: fetcher }))
  onTestFinished(() => client.close())
  return { client, root, retries }
}

describe('approval rounds of a 2026-07-28 client over HTTP', () => {
  it('refuses a retry that carries other arguments than the parked call, deciding and running nothing', async () => {
    const { client, root, retries } = await modernClient((args) => ({ ...args, id: 666 }))
    const refused = await client.callTool({ name: 'wipe', arguments: { id: 5 } }).then(
      () => undefined,
      (error: unknown) => error as Error,
    )
    expect(retries).toEqual([{ id: 5 }])
    expect(refused?.message).toContain('APPROVAL_ARGUMENTS_CHANGED')
    expect(refused?.message).toContain('nothing was decided or run')
    // The parked call is still waiting, undecided, with the arguments it was parked with.
    const pending = await root.approvals.pending()
    expect(pending).toMatchObject([{ tool: 'wipe', arguments: { id: 5 } }])
    expect(pending[0]!.decision).toBeUndefined()
    const events = (await Promise.all((await root.journal.turns()).turns.map((turn) => root.journal.read(turn.turnId)))).flat()
    expect(events.filter((event) => event.kind === 'tool/result' || event.kind === 'approval/decided')).toEqual([])
  })

  it('runs the parked call when the retry carries the same arguments, in any key order', async () => {
    const { client, retries } = await modernClient((args) => Object.fromEntries(Object.entries({ apiToken: 'same', ...args }).reverse()))
    const result = await client.callTool({ name: 'wipe', arguments: { id: 7, apiToken: 'same' } })
    expect(retries).toHaveLength(1)
    expect(text(result)).toBe('wiped ticket 7')
  })

  it('answers a retry after the parked call deadline with its expiry, running nothing', async () => {
    const { client, root } = await modernClient(() => undefined, { ttlMs: 100, answerAfterMs: 300 })
    const result = await client.callTool({ name: 'wipe', arguments: { id: 8 } })
    expect(result.isError).toBe(true)
    expect(text(result)).toMatch(/^\[APPROVAL_TIMEOUT\] /)
    expect(await root.approvals.pending()).toEqual([])
  })
})

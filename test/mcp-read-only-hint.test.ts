import { PassThrough } from 'node:stream'
import { describe, expect, it, onTestFinished } from 'vitest'
import { type ApprovalRequest, capabilitySeamToken, createRoot, definePlugin, McpToolService, memoryJournal, SeamIntegration } from 'seam-runtime'
import { warnAsksEveryCall } from '../src/cli/follow.js'
import { styleFor } from '../src/cli/io.js'
import { fixtureTransport } from '../src/mcp/fixtures/test-helpers.js'
import { beginTurn } from './kit.js'

/**
 * A root mounting the fixture MCP server, whose `slow` says `readOnlyHint: true` and whose `echo`
 * says nothing; every approval question is recorded and answered for the session.
 */
async function mounted(trustAnnotations?: boolean) {
  const asked: Pick<ApprovalRequest, 'name' | 'answers'>[] = []
  const root = await createRoot({
    plugin: definePlugin({
      name: 'host',
      async setup(ctx) {
        const service = new McpToolService({ id: 'fixture', transport: fixtureTransport(), ...(trustAnnotations === undefined ? {} : { trustAnnotations }) })
        await service.connect()
        ctx.effect(() => service.dispose(), 'mcp fixture')
        const seams = new SeamIntegration()
        seams.registerToolService('global', service)
        ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
      },
    }),
    journal: memoryJournal(),
    approval: {
      request: async ({ name, answers }) => {
        asked.push({ name, answers })
        return 'allowed-session'
      },
    },
  })
  onTestFinished(() => root.close())
  const turn = await beginTurn(root)
  const call = async (callId: string, name: 'echo' | 'slow') =>
    (await turn.tools.execute({ callId, name, arguments: name === 'echo' ? '{"text":"x"}' : '{"ms":1}' })).status
  return { root, turn, asked, call }
}

describe("a mounted MCP server's readOnlyHint", () => {
  it('never makes a read-only tool stricter than a tool without the hint: both ask once, with the session answer offered', async () => {
    const { asked, call } = await mounted()
    expect([await call('c1', 'echo'), await call('c2', 'slow'), await call('c3', 'echo'), await call('c4', 'slow')]).toEqual(['completed', 'completed', 'completed', 'completed'])
    const every = ['allowed-once', 'allowed-session', 'rejected']
    expect(asked).toEqual([
      { name: 'echo', answers: every },
      { name: 'slow', answers: every },
    ])
  })

  it('lets the read-only tool skip the question only when the host trusts the server', async () => {
    const { asked, call } = await mounted(true)
    expect([await call('c1', 'slow'), await call('c2', 'echo')]).toEqual(['completed', 'completed'])
    expect(asked.map((question) => question.name)).toEqual(['echo'])
  })

  it("warns in seam dev with the McpToolService option that sets the mounted tool's approval, not risk(args)", async () => {
    const { turn } = await mounted()
    const out = new PassThrough()
    let text = ''
    out.on('data', (chunk: Buffer) => {
      text += chunk.toString()
    })
    warnAsksEveryCall(turn.capabilities, out, styleFor(out, {}), new Set())
    const lines = text.split('\n').filter(Boolean)
    expect(lines.find((l) => l.startsWith('warning: slow '))).toContain("McpToolService({ id: 'fixture', approval: 'never' })")
    expect(lines.find((l) => l.startsWith('warning: echo '))).toContain('trustAnnotations: true')
    expect(text).not.toContain('risk(args)')
  })
})

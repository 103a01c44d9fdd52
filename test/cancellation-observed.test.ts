import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/server'
import { defineTool, type JournalEvent, memoryJournal } from 'seam-runtime'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { McpBridge } from '../src/mcp/server/serve-bridge.js'
import { beginTurn, expectPaired, rootWith, sleep, tappedJournal } from './kit.js'

/** A guard that honours its signal: it rejects once the call is cancelled (at once if it already was). */
const signalHonouringGuard = (exec: { signal: AbortSignal }) =>
  new Promise<undefined>((resolve, reject) => {
    if (exec.signal.aborted) reject(new Error('guard stopped: cancelled'))
    exec.signal.addEventListener('abort', () => reject(new Error('guard stopped: cancelled')), { once: true })
    setTimeout(() => resolve(undefined), 20)
  })

/**
 * Failure 1 of issue 11: work the runtime stops waiting for (a hook, guard or post hook racing the
 * caller's abort) must still be observed. Without that, its late rejection is unhandled and Node
 * exits; the setup file fails each of these tests when that happens.
 */
describe('a cancelled call never leaves a rejection unhandled', () => {
  it('settles a call aborted during its approval/decided write, before a guard that honours the signal', async () => {
    const controller = new AbortController()
    const inner = memoryJournal()
    const journal = tappedJournal(inner, (event) => {
      if (event.kind === 'approval/decided') controller.abort()
    })
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('deploy', defineTool({ description: 'D.', input: z.object({}), approval: 'always', execute: () => 'deployed' }))
        ctx.guards.add(signalHonouringGuard)
      },
      { journal },
    )
    const turn = await beginTurn(root, { signal: controller.signal, ports: { approval: { request: async () => 'allowed-once' } } })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'deploy', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH' })
    await expectPaired(inner, turn.turnId)
  })

  it('settles a body that fails after the abort while a post-execute hook rejects', async () => {
    const controller = new AbortController()
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool(
        'flaky',
        defineTool({
          description: 'F.',
          input: z.object({}),
          approval: 'never',
          execute: async () => {
            controller.abort()
            throw new Error('disk full')
          },
        }),
      )
      ctx.hooks.postExecute(async () => {
        throw new Error('post hook failed too')
      })
    })
    const turn = await beginTurn(root, { signal: controller.signal })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'flaky', arguments: '{}' })
    expect(outcome.status).not.toBe('completed')
    await expectPaired(journal, turn.turnId)
  })

  it('settles a call served over MCP that the client cancels with notifications/cancelled', async () => {
    const journal = memoryJournal()
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool(
          'slow_check',
          defineTool({
            description: 'S.',
            input: z.object({}),
            // A risk check that takes a while: the cancellation arrives while it runs.
            risk: async () => {
              await sleep(30)
              return undefined
            },
            execute: () => 'ran',
          }),
        )
        ctx.guards.add(signalHonouringGuard)
      },
      { journal },
    )
    const bridge = new McpBridge(root)
    const [client, server] = InMemoryTransport.createLinkedPair()
    const messages: JSONRPCMessage[] = []
    client.onmessage = (message) => {
      messages.push(message)
    }
    await bridge.open('s').connect(server)
    await client.start()
    onTestFinished(() => bridge.close())
    await client.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
    while (!messages.some((m) => 'id' in m && m.id === 0)) await sleep(2)
    await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    await client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow_check', arguments: {} } })
    await sleep(10)
    await client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'user pressed stop' } })
    let result: JournalEvent | undefined
    for (let i = 0; i < 200 && !result; i++) {
      await sleep(5)
      result = (await journal.tail(20)).find((e) => e.kind === 'tool/result')
    }
    expect(result).toMatchObject({ status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH' })
    await sleep(40)
  })
})

import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../features/define-tool.js'
import { memoryJournal } from '../runtime/journal/memory.js'
import { definePlugin } from '../runtime/plugins/plugin.js'
import { createRoot } from '../index.js'
import { ConsoleApprovals } from './approvals.js'
import { createConsole } from './console.js'
import type { LiveEvent } from './types.js'

/** A root whose `hold` tool runs until the test lets it go, its console on a loopback port. */
async function holdingConsole() {
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  const plugin = definePlugin({
    name: 'root',
    setup(ctx) {
      ctx.addTool('hold', defineTool({ description: 'Hold.', input: z.object({}), approval: 'never', execute: () => held.then(() => 'let go') }))
    },
  })
  const approvals = new ConsoleApprovals()
  const root = await createRoot({ plugin, journal: memoryJournal(), approval: approvals })
  const web = createConsole(root, { approvals })
  const server = createServer((req, res) => void web.handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(async () => {
    release()
    web.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await root.close()
  })
  return { root, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release }
}

/** The stream's events as they arrive, read from a real HTTP response. */
async function stream(origin: string): Promise<LiveEvent[]> {
  const controller = new AbortController()
  onTestFinished(() => controller.abort())
  const response = await fetch(`${origin}/api/events`, { signal: controller.signal })
  const events: LiveEvent[] = []
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffered = ''
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) return
      buffered += value
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const frame = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        if (frame.startsWith('data: ')) events.push(JSON.parse(frame.slice(6)) as LiveEvent)
      }
    }
  })()
  return events
}

async function until(what: string, check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('the console’s live stream', () => {
  it('tells a page that just opened about a call that began at once, while the call still runs', async () => {
    const { root, origin } = await holdingConsole()
    const events = await stream(origin)
    // No pause: the call begins before the stream's first look at the journal.
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'ada', roles: [] } })
    const outcome = turn.tools.execute({ callId: 'c1', name: 'hold', arguments: '{}' })
    await until('a journal event for the running turn', () => events.some((e) => e.type === 'journal' && e.turnId === turn.turnId))
    expect((await root.journal.read(turn.turnId)).map((e) => e.kind)).toEqual(['turn/begin', 'tool/call'])
    void outcome
  })

  it('names every turn written to since its last look, not only the last one', async () => {
    const { root, origin } = await holdingConsole()
    const principal = { subjectId: 'ada', roles: [] }
    const [first, second] = [await root.beginTurn({ session: 'a', principal }), await root.beginTurn({ session: 'b', principal })]
    const events = await stream(origin)
    // Both within one look: the first turn's call, then the second turn's.
    void first.tools.execute({ callId: 'c1', name: 'hold', arguments: '{}' })
    void second.tools.execute({ callId: 'c2', name: 'hold', arguments: '{}' })
    const named = () => events.flatMap((e) => (e.type === 'journal' ? e.turns : []))
    await until('both turns named', () => named().includes(first.turnId) && named().includes(second.turnId))
    expect(events.filter((e) => e.type === 'journal').at(-1)).toMatchObject({ turnId: second.turnId })
  })
})

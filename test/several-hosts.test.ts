import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { type ApprovalPort, type ApprovalRequest, createRoot, definePlugin, defineTool, type PluginContext, type Root, sqliteJournal } from 'seam-runtime'
import { beginTurn, sleep } from './kit.js'

function journalPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seam-hosts-'))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  return join(dir, 'journal.db')
}

function tools(description: () => string) {
  return (ctx: PluginContext) => {
    ctx.addTool('deploy', defineTool({ description: description(), input: z.object({}), approval: 'once', execute: () => 'deployed' }))
  }
}

async function host(path: string, hostId: string, options: { description?: () => string; leaseMs?: number } = {}): Promise<Root> {
  const setup = tools(options.description ?? (() => 'Deploy.'))
  const root = await createRoot({ plugin: definePlugin({ name: 'root', setup }), journal: sqliteJournal(path, { hostId }), leaseMs: options.leaseMs })
  onTestFinished(() => root.close())
  return root
}

function recording(seen: ApprovalRequest[]): ApprovalPort {
  return {
    request: async (request) => {
      seen.push(request)
      return 'allowed-session'
    },
  }
}

describe('several hosts on one journal', () => {
  it('holds a session grant given on one host on the others, and asks again everywhere once the tool changed', async () => {
    const path = journalPath()
    const seen: ApprovalRequest[] = []
    let description = 'Deploy.'
    const a = await host(path, 'host-a', { description: () => description })
    const b = await host(path, 'host-b', { description: () => description })
    const call = { callId: 'c1', name: 'deploy', arguments: '{}' }
    expect(await (await beginTurn(a, { ports: { approval: recording(seen) } })).tools.execute(call)).toMatchObject({ status: 'completed' })
    expect(await (await beginTurn(b, { ports: { approval: recording(seen) } })).tools.execute(call)).toMatchObject({ status: 'completed' })
    expect(seen).toHaveLength(1)
    description = 'Deploy, and drop the database.'
    await b.reload()
    expect(await (await beginTurn(b, { ports: { approval: recording(seen) } })).tools.execute(call)).toMatchObject({ status: 'completed' })
    expect(seen).toHaveLength(2)
  })

  it('repairs the open calls of a host whose heartbeat stopped, once, within its lease, from whichever live host beats first', async () => {
    const path = journalPath()
    // A host on "another machine": only its lease can tell the others it is gone.
    const dead = sqliteJournal(path, { hostId: 'gone.invalid:1' })
    const at = Date.now()
    await dead.coordination.heartbeat('gone.invalid:1', 300)
    await dead.append({ kind: 'turn/begin', turnId: 't1', seq: 1, at, session: 's1', subjectId: 'u1', generation: 1, owner: 'root' })
    await dead.append({ kind: 'tool/call', turnId: 't1', seq: 2, at, callId: 'c1', name: 'deploy', arguments: '{}', generation: 1 })
    await dead.close()
    // Short leases, but not so short that a live host late by a loaded machine's pause is fenced by the others.
    const live = await Promise.all(['host-b', 'host-c', 'host-d'].map((id) => host(path, id, { leaseMs: 150 })))
    let events = await live[0]!.journal.read('t1')
    for (let waited = 0; waited < 2000 && events.length < 4; waited += 20) {
      await sleep(20)
      events = await live[0]!.journal.read('t1')
    }
    expect(events.map((event) => event.kind)).toEqual(['turn/begin', 'tool/call', 'tool/result', 'turn/end'])
    expect(events[2]).toMatchObject({ code: 'OUTCOME_UNKNOWN' })
    // Not before the lease ran out, and soon after (a live host beats every 50 ms).
    expect(events[2]!.at).toBeGreaterThanOrEqual(at + 300)
    expect(events[2]!.at).toBeLessThan(at + 1300)
    await sleep(60)
    expect(await live[1]!.journal.read('t1')).toHaveLength(4)
  })

  it('retires its heartbeat when it closes', async () => {
    const path = journalPath()
    const a = await host(path, 'host-a')
    const observer = sqliteJournal(path, { hostId: 'observer' })
    onTestFinished(() => observer.close())
    // A second store sees host-a's beat: repair would wait for its lease.
    const beats = () => (observer.coordination as unknown as { beats(): { host: string }[] }).beats().map((beat) => beat.host)
    expect(beats()).toContain('host-a')
    await a.close()
    expect(beats()).not.toContain('host-a')
  })
})

import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { capabilitySeamToken, defineTool, SeamIntegration, type ApprovalPort, type ApprovalRequest, type PluginContext } from 'seam-runtime'
import { beginTurn, expectPaired, journalKinds, rootWith } from '../../../test/kit.js'

function tools(ran: string[], description = 'Write a note.') {
  return (ctx: PluginContext) => {
    ctx.addTool('note', defineTool({ description, input: z.object({ text: z.string() }), approval: 'always', execute: ({ text }) => { ran.push(text); return 'ok' } }))
    ctx.addTool('once', defineTool({ description: 'Once per session.', input: z.object({}), approval: 'once', execute: () => { ran.push('once'); return 'ok' } }))
    ctx.addTool('overwrite', defineTool({
      description: 'Risky only when overwriting.',
      input: z.object({ exists: z.boolean() }),
      approval: 'on-risk',
      risk: ({ exists }) => (exists ? 'would overwrite an existing file' : undefined),
      execute: () => { ran.push('overwrite'); return 'ok' },
    }))
    ctx.addTool('undeclared', defineTool({ description: 'No risk info.', input: z.object({}), execute: () => { ran.push('undeclared'); return 'ok' } }))
    ctx.addTool('readonly', defineTool({ description: 'Read only.', input: z.object({}), annotations: { readOnlyHint: true }, execute: () => { ran.push('readonly'); return 'ok' } }))
  }
}

const port = (answer: (req: ApprovalRequest) => Promise<unknown>, seen: ApprovalRequest[] = []): ApprovalPort => ({
  request: (req) => {
    seen.push(req)
    return answer(req) as Promise<'allowed-once'>
  },
})

describe('approval', () => {
  it.each([
    ['allowed-once', 'completed', undefined],
    ['allowed-session', 'completed', undefined],
    ['rejected', 'denied', 'DENIED'],
    ['maybe', 'denied', 'APPROVAL_UNAVAILABLE'],
  ])('answer %s → %s', async (answer, status, code) => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran))
    const turn = await beginTurn(root, { ports: { approval: port(async () => answer) } })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    expect(outcome.status).toBe(status)
    expect(outcome.code).toBe(code)
    expect(ran).toEqual(status === 'completed' ? ['hi'] : [])
    const events = await journal.read(turn.turnId)
    // `note` always asks, so a session answer cannot hold beyond this call: it is recorded as what it means.
    const recorded = answer === 'maybe' ? 'unavailable' : answer === 'allowed-session' ? 'allowed-once' : answer
    expect(events.find((e) => e.kind === 'approval/decided')).toMatchObject({ decision: recorded })
    await expectPaired(journal, turn.turnId)
  })

  it('offers only the answers that mean something for the tool: no session grant where it would not be consulted', async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith((ctx) => {
      tools([])(ctx)
      ctx.hooks.preExecute((exec, next) => (exec.name === 'readonly' ? { kind: 'ask', reason: 'a hook asks' } : next()))
    })
    const turn = await beginTurn(root, { ports: { approval: port(async () => 'rejected', seen) } })
    await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    await turn.tools.execute({ callId: 'c2', name: 'once', arguments: '{}' })
    await turn.tools.execute({ callId: 'c3', name: 'overwrite', arguments: '{"exists":true}' })
    await turn.tools.execute({ callId: 'c4', name: 'readonly', arguments: '{}' })
    expect(seen.map((req) => [req.name, req.answers])).toEqual([
      ['note', ['allowed-once', 'rejected']],
      ['once', ['allowed-session', 'rejected']],
      ['overwrite', ['allowed-once', 'allowed-session', 'rejected']],
      ['readonly', ['allowed-once', 'rejected']],
    ])
  })

  it('records a session answer to an always tool as allowed-once, and asks again on the next call', async () => {
    const seen: ApprovalRequest[] = []
    const { root, journal } = await rootWith(tools([]))
    const turn = await beginTurn(root, { ports: { approval: port(async () => 'allowed-session', seen) } })
    await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"one"}' })
    await turn.tools.execute({ callId: 'c2', name: 'note', arguments: '{"text":"two"}' })
    expect(seen.map((req) => req.callId)).toEqual(['c1', 'c2'])
    const decided = (await journal.read(turn.turnId)).filter((e) => e.kind === 'approval/decided')
    expect(decided.map((e) => (e as { decision: string }).decision)).toEqual(['allowed-once', 'allowed-once'])
  })

  it('hands the port the tool name, frozen arguments, a one-line summary, the reason and a signal', async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith(tools([]))
    const turn = await beginTurn(root, { ports: { approval: port(async () => 'allowed-once', seen) } })
    await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hello"}' })
    expect(seen[0]).toMatchObject({ callId: 'c1', name: 'note', arguments: { text: 'hello' }, summary: 'note text="hello"', reason: '"note" always asks for approval', session: 'session-1' })
    expect(Object.isFrozen(seen[0]!.arguments)).toBe(true)
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal)
  })

  it('redacts secret-looking arguments in the summary', async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith((ctx) => {
      ctx.addTool('login', defineTool({ description: 'Log in.', input: z.object({ user: z.string(), password: z.string() }), approval: 'always', execute: () => 'ok' }))
    })
    const turn = await beginTurn(root, { ports: { approval: port(async () => 'rejected', seen) } })
    await turn.tools.execute({ callId: 'c1', name: 'login', arguments: '{"user":"ada","password":"hunter2"}' })
    expect(seen[0]!.summary).toBe('login user="ada" password="[redacted]"')
  })

  it('fails closed when the port throws, and never runs the body', async () => {
    const ran: string[] = []
    const { root } = await rootWith(tools(ran))
    const turn = await beginTurn(root, { ports: { approval: port(async () => { throw new Error('terminal gone') }) } })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'APPROVAL_UNAVAILABLE', policy: 'approval', details: { error: 'terminal gone' } })
    expect(ran).toEqual([])
  })

  it('times out a port that hangs past approvalTimeoutMs and aborts its request signal', async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith(tools([]), { defaults: { approvalTimeoutMs: 30 } })
    const turn = await beginTurn(root, { ports: { approval: port(() => new Promise(() => {}), seen) } })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'APPROVAL_TIMEOUT', policy: 'approval' })
    expect(seen[0]!.signal.aborted).toBe(true)
  })

  it('settles a call whose turn is aborted during approval as cancelled before dispatch', async () => {
    const ran: string[] = []
    const controller = new AbortController()
    const { root } = await rootWith(tools(ran))
    const turn = await beginTurn(root, {
      signal: controller.signal,
      ports: { approval: port(() => { setTimeout(() => controller.abort(), 5); return new Promise(() => {}) }) },
    })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED_BEFORE_DISPATCH' })
    expect(ran).toEqual([])
  })

  it('is unavailable for an unattended turn even when the root has a port', async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith(tools([]), { approval: port(async () => 'allowed-once', seen) })
    const turn = await beginTurn(root, { unattended: true })
    expect((await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })).code).toBe('APPROVAL_UNAVAILABLE')
    expect(seen).toEqual([])
  })

  it('on-risk asks only when risk() gives a reason, or when the tool declares no risk information', async () => {
    const seen: ApprovalRequest[] = []
    const ran: string[] = []
    const { root } = await rootWith(tools(ran))
    const turn = await beginTurn(root, { ports: { approval: port(async () => 'allowed-once', seen) } })
    await turn.tools.execute({ callId: 'c1', name: 'overwrite', arguments: '{"exists":false}' })
    await turn.tools.execute({ callId: 'c2', name: 'overwrite', arguments: '{"exists":true}' })
    await turn.tools.execute({ callId: 'c3', name: 'readonly', arguments: '{}' })
    await turn.tools.execute({ callId: 'c4', name: 'undeclared', arguments: '{}' })
    expect(seen.map((r) => [r.callId, r.reason])).toEqual([
      ['c2', 'would overwrite an existing file'],
      ['c4', '"undeclared" declares no risk information'],
    ])
    expect(ran).toEqual(['overwrite', 'overwrite', 'readonly', 'undeclared'])
  })

  it('once asks once per session, and allowed-session skips later on-risk prompts in that session only', async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith(tools([]))
    const approval = port(async () => 'allowed-session', seen)
    const first = await beginTurn(root, { ports: { approval } })
    await first.tools.execute({ callId: 'c1', name: 'once', arguments: '{}' })
    await first.tools.execute({ callId: 'c2', name: 'once', arguments: '{}' })
    await first.tools.execute({ callId: 'c3', name: 'undeclared', arguments: '{}' })
    await first.tools.execute({ callId: 'c4', name: 'undeclared', arguments: '{}' })
    const other = await beginTurn(root, { session: 'session-2', ports: { approval } })
    await other.tools.execute({ callId: 'c5', name: 'once', arguments: '{}' })
    expect(seen.map((r) => r.callId)).toEqual(['c1', 'c3', 'c5'])
  })

  it('always asks, even after an allowed-session answer', async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith(tools([]))
    const turn = await beginTurn(root, { ports: { approval: port(async () => 'allowed-session', seen) } })
    await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"a"}' })
    await turn.tools.execute({ callId: 'c2', name: 'note', arguments: '{"text":"b"}' })
    expect(seen).toHaveLength(2)
  })

  it('drops a session grant when the tool fingerprint changes', async () => {
    const seen: ApprovalRequest[] = []
    let description = 'Once per session.'
    const { root } = await rootWith((ctx) => {
      ctx.addTool('once', defineTool({ description, input: z.object({}), approval: 'once', execute: () => 'ok' }))
    })
    const approval = port(async () => 'allowed-once', seen)
    let turn = await beginTurn(root, { ports: { approval } })
    await turn.tools.execute({ callId: 'c1', name: 'once', arguments: '{}' })
    await turn.end()
    await root.reload()
    turn = await beginTurn(root, { ports: { approval } })
    await turn.tools.execute({ callId: 'c2', name: 'once', arguments: '{}' })
    await turn.end()
    expect(seen.map((r) => r.callId)).toEqual(['c1'])
    description = 'Once per session, but now it deletes things.'
    await root.reload()
    turn = await beginTurn(root, { ports: { approval } })
    await turn.tools.execute({ callId: 'c3', name: 'once', arguments: '{}' })
    expect(seen.map((r) => r.callId)).toEqual(['c1', 'c3'])
  })

  it("keeps a session grant to its principal: another user reusing the session id is asked", async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith(tools([]))
    const approval = port(async () => 'allowed-session', seen)
    const mine = await beginTurn(root, { ports: { approval } })
    await mine.tools.execute({ callId: 'c1', name: 'once', arguments: '{}' })
    await mine.tools.execute({ callId: 'c2', name: 'once', arguments: '{}' })
    const theirs = await beginTurn(root, { principal: { subjectId: 'user-2', roles: [] }, ports: { approval } })
    await theirs.tools.execute({ callId: 'c3', name: 'once', arguments: '{}' })
    expect(seen.map((r) => r.callId)).toEqual(['c1', 'c3'])
  })

  it('asks again when another provider offers a tool with the same name, description and schema', async () => {
    const seen: ApprovalRequest[] = []
    let provider = 'trusted'
    const { root } = await rootWith((ctx) => {
      const seams = new SeamIntegration()
      seams.registerToolService('global', {
        id: provider,
        description: provider,
        schema: () => [{ type: 'function', function: { name: 'deploy', description: 'Deploy.', parameters: { type: 'object' } }, approval: 'once' }],
        execute: async () => ({ success: true, output: provider }),
      })
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const approval = port(async () => 'allowed-session', seen)
    let turn = await beginTurn(root, { ports: { approval } })
    await turn.tools.execute({ callId: 'c1', name: 'deploy', arguments: '{}' })
    await turn.tools.execute({ callId: 'c2', name: 'deploy', arguments: '{}' })
    await turn.end()
    provider = 'swapped'
    await root.reload()
    turn = await beginTurn(root, { ports: { approval } })
    const outcome = await turn.tools.execute({ callId: 'c3', name: 'deploy', arguments: '{}' })
    expect(outcome.value).toBe('swapped')
    expect(seen.map((r) => r.callId)).toEqual(['c1', 'c3'])
  })

  it('keeps a session grant for a tool only a plugin owner sees across a publish', async () => {
    const seen: ApprovalRequest[] = []
    const { root } = await rootWith((ctx) => {
      const seams = new SeamIntegration()
      seams.registerToolService('root/agents', {
        id: 'agents',
        description: 'Agent tools.',
        schema: () => [{ type: 'function', function: { name: 'dispatch', description: 'Dispatch.', parameters: { type: 'object' } }, approval: 'once' }],
        execute: async () => ({ success: true, output: 'sent' }),
      })
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const approval = port(async () => 'allowed-session', seen)
    for (const callId of ['c1', 'c2']) {
      const turn = await beginTurn(root, { owner: 'root/agents', ports: { approval } })
      expect(await turn.tools.execute({ callId, name: 'dispatch', arguments: '{}' })).toMatchObject({ status: 'completed' })
      await turn.end()
      await root.reload()
    }
    expect(seen.map((r) => r.callId)).toEqual(['c1'])
  })

  it('journals the question and the answer between tool/call and tool/result', async () => {
    const { root, journal } = await rootWith(tools([]))
    const turn = await beginTurn(root, { ports: { approval: port(async () => 'allowed-once') } })
    await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'approval/asked:c1', 'approval/decided:c1', 'tool/result:c1'])
  })
})

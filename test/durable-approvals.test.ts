import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { createRoot, deferApprovals, definePlugin, defineTool, type PluginContext, type Root, SeamError, sqliteJournal } from 'seam-runtime'
import { beginTurn, expectPaired, journalKinds, rootWith } from './kit.js'

/** Tools whose bodies record what ran; `note` always asks, `lookup` never does. */
function tools(ran: string[], description = () => 'Write a note.') {
  return (ctx: PluginContext) => {
    ctx.addTool('note', defineTool({ description: description(), input: z.object({ text: z.string() }), approval: 'always', isConcurrencySafe: () => true, execute: ({ text }) => { ran.push(text); return `wrote ${text}` } }))
    ctx.addTool('lookup', defineTool({ description: 'Look up.', input: z.object({}), approval: 'never', isConcurrencySafe: () => true, execute: () => { ran.push('lookup'); return 'found' } }))
  }
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<SeamError> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason)
  expect(SeamError.is(error, code as never), `expected ${code}, got ${String(error)}`).toBe(true)
  return error as SeamError
}

describe('parked calls', () => {
  it('parks a deferred call: suspended with APPROVAL_PENDING and a resume token, the question journaled, no body and no result', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran), { approval: deferApprovals() })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    expect(outcome).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING', policy: 'approval' })
    expect(outcome.resumeToken).toEqual(expect.any(String))
    expect(ran).toEqual([])
    expect(await journalKinds(journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'approval/asked:c1'])
  })

  it('commits the other calls of a batch in model order around a parked one', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran), { approval: deferApprovals() })
    const turn = await beginTurn(root)
    const outcomes = await turn.tools.executeBatch([
      { callId: 'a', name: 'lookup', arguments: '{}' },
      { callId: 'b', name: 'note', arguments: '{"text":"hi"}' },
      { callId: 'c', name: 'lookup', arguments: '{}' },
    ])
    expect(outcomes.map((o) => [o.callId, o.status])).toEqual([
      ['a', 'completed'],
      ['b', 'suspended'],
      ['c', 'completed'],
    ])
    const results = (await journal.read(turn.turnId)).filter((e) => e.kind === 'tool/result').map((e) => (e as { callId: string }).callId)
    expect(results).toEqual(['a', 'c'])
  })

  it('lists a parked call, and once allowed runs its body once on resume, writing one result in its own turn', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran), { approval: deferApprovals() })
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi","apiKey":"k-1"}'.replace(',"apiKey":"k-1"', '') })
    const [pending] = await root.approvals.pending({ session: 'session-1', principal: 'user-1' })
    expect(pending).toMatchObject({ callId: 'c1', turnId: turn.turnId, tool: 'note', arguments: { text: 'hi' }, summary: 'note text="hi"', principal: 'user-1', resumeToken: parked.resumeToken })
    expect(await turn.tools.resume(parked.resumeToken!)).toMatchObject({ status: 'suspended', resumeToken: parked.resumeToken })
    const decided = await root.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    expect(decided.decision).toMatchObject({ answer: 'allowed-once', by: 'ann' })
    const outcome = await turn.tools.resume(parked.resumeToken!)
    expect(outcome).toMatchObject({ callId: 'c1', status: 'completed', value: 'wrote hi' })
    expect(ran).toEqual(['hi'])
    // A second resume replays the journaled result.
    expect(await turn.tools.resume(parked.resumeToken!)).toMatchObject({ status: 'completed', replayed: true, content: [{ type: 'text', text: 'wrote hi' }] })
    expect(ran).toEqual(['hi'])
    await turn.end()
    expect((await journal.read(turn.turnId)).map((e) => [e.seq, 'callId' in e ? `${e.kind}:${e.callId}` : e.kind])).toEqual([
      [1, 'turn/begin'],
      [2, 'tool/call:c1'],
      [3, 'approval/asked:c1'],
      [4, 'approval/decided:c1'],
      [5, 'tool/result:c1'],
      [6, 'turn/end'],
    ])
    expect(await root.approvals.pending()).toEqual([])
  })

  it('keeps the first decision and refuses a second with APPROVAL_CONFLICT naming it', async () => {
    const { root } = await rootWith(tools([]), { approval: deferApprovals() })
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    await root.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    const error = await rejectsWith(root.approvals.decide('c1', 'rejected', { by: 'bob' }), 'APPROVAL_CONFLICT')
    expect(error.message).toContain('allowed-once by ann')
    await rejectsWith(root.approvals.decide('nope', 'rejected', { by: 'bob' }), 'UNKNOWN_APPROVAL')
    await rejectsWith(root.resume('nope', { principal: 'user-1' }), 'UNKNOWN_APPROVAL')
  })

  it('lists each parked call with the answers its question offered, and refuses another with INVALID_CALL, leaving it waiting', async () => {
    const ran: string[] = []
    const { root } = await rootWith(
      (ctx) => {
        tools(ran)(ctx)
        ctx.addTool('greet', defineTool({ description: 'Greet.', input: z.object({}), approval: 'once', execute: () => 'hello' }))
        // `on-risk` (the default) without a risk function: asks every call, and a session grant skips the next question.
        ctx.addTool('tag', defineTool({ description: 'Tag.', input: z.object({}), execute: () => 'tagged' }))
      },
      { approval: deferApprovals() },
    )
    const turn = await beginTurn(root)
    const note = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    await turn.tools.execute({ callId: 'c2', name: 'greet', arguments: '{}' })
    await turn.tools.execute({ callId: 'c3', name: 'tag', arguments: '{}' })
    expect((await root.approvals.pending()).map((p) => [p.tool, p.answers])).toEqual([
      ['note', ['allowed-once', 'rejected']],
      ['greet', ['allowed-session', 'rejected']],
      ['tag', ['allowed-once', 'allowed-session', 'rejected']],
    ])

    const refused = await rejectsWith(root.approvals.decide('c1', 'allowed-session', { by: 'ann' }), 'INVALID_CALL')
    expect(refused.message).toBe('the call "c1" to note offers allowed-once or rejected, not allowed-session; it is still waiting')
    await rejectsWith(root.approvals.decide(note.resumeToken!, 'allowed-session', { by: 'ann' }), 'INVALID_CALL')
    await rejectsWith(root.approvals.decide('c2', 'allowed-once', { by: 'ann' }), 'INVALID_CALL')
    // Refused, nothing was recorded: both still wait, undecided, and take an answer they offer.
    expect((await root.approvals.pending()).filter((p) => p.decision !== undefined)).toEqual([])
    expect(await turn.tools.resume(note.resumeToken!)).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING' })
    await root.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    await root.approvals.decide('c2', 'allowed-session', { by: 'ann' })
    await root.approvals.decide('c3', 'allowed-session', { by: 'ann' })
    expect(await turn.tools.resume(note.resumeToken!)).toMatchObject({ status: 'completed', value: 'wrote hi' })
    expect(ran).toEqual(['hi'])
  })

  it('settles a rejected call DENIED by approval policy without running it, and resume returns that result', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran), { approval: deferApprovals() })
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    await root.approvals.decide(parked.resumeToken!, 'rejected', { by: 'ann' })
    expect(await turn.tools.resume(parked.resumeToken!)).toMatchObject({ status: 'denied', code: 'DENIED', policy: 'approval', replayed: true })
    expect(ran).toEqual([])
    expect((await journal.read(turn.turnId)).find((e) => e.kind === 'approval/decided')).toMatchObject({ decision: 'rejected', seq: 4 })
    await expectPaired(journal, turn.turnId)
  })

  it('voids a decision when the tool changed before the resume, and asks again', async () => {
    const ran: string[] = []
    let description = 'Write a note.'
    const { root } = await rootWith(tools(ran, () => description), { approval: deferApprovals() })
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    await turn.end()
    await root.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    description = 'Write a note, and mail it to everyone.'
    expect((await root.reload()).ok).toBe(true)
    const again = await root.resume(parked.resumeToken!, { principal: 'user-1' })
    expect(again).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING' })
    expect(again.resumeToken).not.toBe(parked.resumeToken)
    expect(ran).toEqual([])
    const [pending] = await root.approvals.pending()
    expect(pending).toMatchObject({ callId: 'c1', round: 2, answers: ['allowed-once', 'rejected'] })
    expect(pending!.decision).toBeUndefined()
    await root.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    expect(await root.resume(again.resumeToken!, { principal: 'user-1' })).toMatchObject({ status: 'completed' })
    expect(ran).toEqual(['hi'])
  })

  it('closes the root only once a call resumed through root.resume has settled and journaled its result, past the generation grace', async () => {
    let finish!: () => void
    const gate = new Promise<void>((resolve) => {
      finish = resolve
    })
    const { root, journal } = await rootWith(
      (ctx) => {
        ctx.addTool('slow', defineTool({ description: 'Slow.', input: z.object({}), approval: 'always', execute: () => gate.then(() => 'done') }))
      },
      // A body may run far past the grace a disposed generation gets: its own deadline bounds it.
      { approval: deferApprovals(), defaults: { graceMs: 100 } },
    )
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    await turn.end()
    await root.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    const resumed = root.resume(parked.resumeToken!, { principal: 'user-1' })
    await new Promise((resolve) => setTimeout(resolve, 50))
    const closed = root.close()
    setTimeout(finish, 400)
    expect(await resumed).toMatchObject({ status: 'completed', content: [{ text: 'done' }] })
    await closed
    await expectPaired(journal, turn.turnId)
    expect((await journal.read(turn.turnId)).filter((event) => event.kind === 'tool/result')).toMatchObject([{ callId: 'c1', status: 'completed' }])
  })

  it('settles a call parked longer than approvalTtlMs as APPROVAL_TIMEOUT, once', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(tools(ran), { approval: deferApprovals(), defaults: { approvalTtlMs: 1 } })
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const sweeps = await Promise.all([root.approvals.expire(), root.approvals.expire(), root.approvals.pending()])
    expect(sweeps[0] + sweeps[1]).toBeLessThanOrEqual(1)
    expect(sweeps[2]).toEqual([])
    expect(await turn.tools.resume(parked.resumeToken!)).toMatchObject({ status: 'denied', code: 'APPROVAL_TIMEOUT' })
    expect(ran).toEqual([])
    await expectPaired(journal, turn.turnId)
  })
})

describe('parked calls across processes on one SQLite journal', () => {
  function journalPath(): string {
    const dir = mkdtempSync(join(tmpdir(), 'seam-parked-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    return join(dir, 'journal.db')
  }

  async function host(path: string, hostId: string, ran: string[]): Promise<Root> {
    const root = await createRoot({ plugin: definePlugin({ name: 'root', setup: tools(ran) }), journal: sqliteJournal(path, { hostId }), approval: deferApprovals() })
    onTestFinished(() => root.close())
    return root
  }

  it('keeps a parked call through a restart, then decides it on one host and runs it once when two others race to resume', async () => {
    const path = journalPath()
    const ran: string[] = []
    const a = await host(path, 'host-a', ran)
    const turn = await beginTurn(a)
    const parked = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hi"}' })
    await a.close()
    // Every host restarts: crash repair leaves the parked call open.
    const b = await host(path, 'host-a', ran)
    expect(b.repaired).toEqual({ results: 0, turns: 0 })
    expect(await b.approvals.pending()).toHaveLength(1)
    await b.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    const c = await host(path, 'host-c', ran)
    const d = await host(path, 'host-d', ran)
    const outcomes = await Promise.all([c.resume(parked.resumeToken!, { principal: 'user-1' }), d.resume(parked.resumeToken!, { principal: 'user-1' })])
    expect(ran).toEqual(['hi'])
    expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed'])
    expect(outcomes.filter((o) => o.replayed)).toHaveLength(1)
    const events = await b.journal.read(turn.turnId)
    expect(events.filter((e) => e.kind === 'tool/result')).toHaveLength(1)
  })
})

describe('a resumed call that asks', () => {
  const survey = (ctx: PluginContext) => {
    ctx.addTool(
      'survey',
      defineTool({
        description: 'Asks a colour once allowed.',
        input: z.object({}),
        approval: 'always',
        execute: async (_args, { ask }) => {
          const answer = await ask({ message: 'Which colour?', schema: { type: 'object', properties: { colour: { type: 'string' } } } })
          return answer.action === 'accept' ? `chose ${String(answer.content.colour)}` : answer.action
        },
      }),
    )
  }
  const green = { elicit: async () => ({ action: 'accept' as const, content: { colour: 'green' } }) }

  it.each(['its own live turn', 'a later turn of the session'])('asks its question after the approval when resumed in %s, journaling the question and one result', async (where) => {
    const { root, journal } = await rootWith(survey, { approval: deferApprovals() })
    const first = await root.beginTurn({ session: 'session-1', principal: { subjectId: 'user-1' }, ports: { question: green } })
    const parked = await first.tools.execute({ callId: 'c1', name: 'survey', arguments: '{}' })
    expect(parked).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING' })
    await root.approvals.decide('c1', 'allowed-once', { by: 'ann' })
    let resumer = first
    if (where !== 'its own live turn') {
      await first.end()
      resumer = await root.beginTurn({ session: 'session-1', principal: { subjectId: 'user-1' }, ports: { question: green } })
    }
    const done = await resumer.tools.resume(parked.resumeToken!)
    expect(done).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'chose green' }] })
    const kinds = await journalKinds(journal, first.turnId)
    expect(kinds.filter((k) => k.startsWith('question/'))).toEqual(['question/asked:c1', 'question/answered:c1'])
    expect(kinds.filter((k) => k === 'tool/result:c1')).toHaveLength(1)
    const seqs = (await journal.read(first.turnId)).map((event) => event.seq)
    expect(new Set(seqs).size).toBe(seqs.length)
    await expectPaired(journal, first.turnId)
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { deferApprovals, defineTool, type JournalEvent, type PluginContext, sqliteJournal, transcript } from 'seam-runtime'
import { openSqlite } from '../src/runtime/journal/sqlite-driver.js'
import { beginTurn, expectPaired, rootWith } from './kit.js'

/** `add` and `mul` are pure and safe to overlap; `slow` waits, recording how many ran at once; `secret` is hidden; `danger` is denied by a guard. */
function tools(log: string[], overlap = { now: 0, max: 0 }) {
  return (ctx: PluginContext) => {
    ctx.addTool('add', defineTool({ description: 'Add two numbers.', input: z.object({ a: z.number(), b: z.number() }), output: z.number(), approval: 'never', isConcurrencySafe: () => true, execute: ({ a, b }) => { log.push(`add ${a} ${b}`); return a + b } }))
    ctx.addTool('mul', defineTool({ description: 'Multiply two numbers.', input: z.object({ a: z.number(), b: z.number() }), approval: 'never', isConcurrencySafe: () => true, execute: ({ a, b }) => { log.push(`mul ${a} ${b}`); return a * b } }))
    ctx.addTool('slow', defineTool({
      description: 'Wait a little.',
      input: z.object({ id: z.string(), safe: z.boolean(), gather: z.number().optional() }),
      approval: 'never',
      isConcurrencySafe: ({ safe }) => safe,
      async execute({ id, gather }) {
        overlap.now += 1
        overlap.max = Math.max(overlap.max, overlap.now)
        // `gather`: wait (up to 5 s) until that many bodies run at once, so a loaded machine that
        // delivers the program's sub-calls slowly still shows whether they overlap.
        const until = Date.now() + 5_000
        do await new Promise((resolve) => setTimeout(resolve, 30))
        while (gather !== undefined && overlap.max < gather && Date.now() < until)
        overlap.now -= 1
        log.push(`slow ${id}`)
        return id
      },
    }))
    ctx.addTool('secret', defineTool({ description: 'Hidden.', input: z.object({}), approval: 'never', hidden: true, execute: () => { log.push('secret'); return 'leaked' } }))
    ctx.addTool('danger', defineTool({ description: 'Denied.', input: z.object({}), approval: 'never', execute: () => { log.push('danger'); return 'ran' } }))
    ctx.guards.add((exec) => (exec.name === 'danger' ? 'danger is not allowed' : undefined))
  }
}

const run = (callId: string, code: string) => ({ callId, name: 'run_code', arguments: JSON.stringify({ code }) })

type CallEvent = Extract<JournalEvent, { kind: 'tool/call' }>

describe('run_code', () => {
  it('is offered only when Code Mode is on, declaring the turn\'s own tools (hidden ones left out)', async () => {
    const { root } = await rootWith(tools([]), { codeMode: true })
    const on = await beginTurn(root)
    const tool = on.capabilities.tools.find((t) => t.name === 'run_code')!
    expect(tool.parameters).toMatchObject({ required: ['code'] })
    expect(tool.description).toContain('add(args: {')
    expect(tool.description).toContain('Promise<number>')
    expect(tool.description).not.toContain('secret')
    const off = await beginTurn(root, { codeMode: false })
    expect(off.capabilities.tools.map((t) => t.name)).not.toContain('run_code')
    const { root: plain } = await rootWith(tools([]))
    expect((await beginTurn(plain)).capabilities.tools.map((t) => t.name)).not.toContain('run_code')
    expect((await beginTurn(plain, { codeMode: true })).capabilities.tools.map((t) => t.name)).toContain('run_code')
  })

  it('runs three sub-calls in sequence and two in parallel through the pipeline, each journaled as a pair linked to the run', async () => {
    const log: string[] = []
    const { root, journal } = await rootWith(tools(log), { codeMode: true })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute(
      run(
        'r1',
        `const a = await tools.add({ a: 1, b: 2 })
         const b = await tools.mul({ a, b: 10 })
         const c = await tools.add({ a: b, b: 0.5 })
         const [d, e] = await Promise.all([tools.mul({ a: 2, b: 3 }), tools.add({ a: 4, b: 5 })])
         console.log('sum', a + b + c + d + e)
         return { a, b, c, d, e }`,
      ),
    )
    expect(outcome).toMatchObject({ status: 'completed', value: { value: { a: 3, b: 30, c: 30.5, d: 6, e: 9 }, logs: [{ level: 'log', text: 'sum 78.5' }] } })
    expect(log).toEqual(['add 1 2', 'mul 3 10', 'add 30 0.5', 'mul 2 3', 'add 4 5'])
    const events = await journal.read(turn.turnId)
    const calls = events.filter((e): e is CallEvent => e.kind === 'tool/call')
    expect(calls.map((c) => [c.callId, c.name, c.parent])).toEqual([
      ['r1', 'run_code', undefined],
      ['r1/1', 'add', 'r1'],
      ['r1/2', 'mul', 'r1'],
      ['r1/3', 'add', 'r1'],
      ['r1/4', 'mul', 'r1'],
      ['r1/5', 'add', 'r1'],
    ])
    await expectPaired(journal, turn.turnId)
    // The run's result comes last: every sub-call settled inside it.
    expect(events.filter((e) => e.kind === 'tool/result').at(-1)).toMatchObject({ callId: 'r1', status: 'completed' })
    const messages = await transcript(journal, { turnId: turn.turnId })
    expect(messages.filter((m) => m.role === 'tool').map((m) => (m as { result: { callId: string } }).result.callId)).toEqual(['r1'])
  })

  it('overlaps safe sub-calls that Promise.all asks for, and runs an exclusive one as a barrier', async () => {
    const log: string[] = []
    const overlap = { now: 0, max: 0 }
    const { root } = await rootWith(tools(log, overlap), { codeMode: true })
    const turn = await beginTurn(root)
    const parallel = await turn.tools.execute(run('p', `return await Promise.all(['a', 'b', 'c'].map((id) => tools.slow({ id, safe: true, gather: 3 })))`))
    expect(parallel.value).toMatchObject({ value: ['a', 'b', 'c'] })
    expect(overlap.max).toBe(3)
    overlap.max = 0
    log.length = 0
    const barrier = await turn.tools.execute(
      run('x', `return await Promise.all([tools.slow({ id: 'a', safe: true }), tools.slow({ id: 'b', safe: false }), tools.slow({ id: 'c', safe: true })])`),
    )
    expect(barrier.value).toMatchObject({ value: ['a', 'b', 'c'] })
    expect(overlap.max).toBe(1)
    expect(log).toEqual(['slow a', 'slow b', 'slow c'])
  })

  it('rejects the program\'s promise with the code and message of a denied or hidden sub-call, which the program may catch', async () => {
    const log: string[] = []
    const { root, journal } = await rootWith(tools(log), { codeMode: true })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute(
      run(
        'r1',
        `const caught = []
         for (const name of ['danger', 'secret']) {
           try { await tools.call(name, {}) } catch (error) { caught.push([error.code, error.message]) }
         }
         return caught`,
      ),
    )
    expect(outcome.status).toBe('completed')
    const [[deniedCode, deniedText], [hiddenCode]] = (outcome.value as { value: [[string, string], [string, string]] }).value
    expect(deniedCode).toBe('DENIED')
    expect(deniedText).toContain('danger is not allowed')
    expect(hiddenCode).toBe('UNKNOWN_TOOL')
    expect(log).toEqual([])
    await expectPaired(journal, turn.turnId)
  })

  it('settles the run with the program\'s own failure code', async () => {
    const { root } = await rootWith(tools([]), { codeMode: { limits: { cpuMs: 200 } } })
    const turn = await beginTurn(root)
    expect(await turn.tools.execute(run('t', `throw new Error('boom')`))).toMatchObject({ status: 'failed', code: 'CODE_THREW' })
    expect(await turn.tools.execute(run('l', `while (true) {}`))).toMatchObject({ status: 'failed', code: 'CODE_CPU_LIMIT' })
    expect(await turn.tools.execute(run('s', `return (`))).toMatchObject({ status: 'failed', code: 'CODE_SYNTAX' })
  })
})

describe('run_code across approvals', () => {
  function approvalTools(ran: string[]) {
    return (ctx: PluginContext) => {
      ctx.addTool('count', defineTool({ description: 'Count.', input: z.object({ n: z.number() }), approval: 'never', execute: ({ n }, c) => { ran.push(`count ${n} ${c.callId}`); return n } }))
      ctx.addTool('note', defineTool({ description: 'Write a note.', input: z.object({ text: z.string() }), approval: 'always', execute: ({ text }, c) => { ran.push(`note ${text} ${c.callId}`); return `noted ${text}` } }))
    }
  }
  const program = `const a = await tools.count({ n: 1 })
    const t = Date.now(), r = Math.random()
    const noted = await tools.note({ text: 'hi' })
    const b = await tools.count({ n: 2 })
    return { a, noted, b, t, r }`

  it('parks the run for a sub-call, lists the sub-call, and on resume answers settled sub-calls from the round', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(approvalTools(ran), { codeMode: true, approval: deferApprovals() })
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute(run('r1', program))
    expect(parked).toMatchObject({ callId: 'r1', status: 'suspended', code: 'APPROVAL_PENDING' })
    expect(ran).toEqual(['count 1 r1/1'])
    const [pending] = await root.approvals.pending({ principal: 'user-1' })
    expect(pending).toMatchObject({ callId: 'r1', tool: 'note', arguments: { text: 'hi' }, reason: '"note" always asks for approval' })
    const [round] = await journal.coordination.parked({ callId: 'r1' })
    expect(round!.code).toMatchObject({ tool: 'run_code', index: 1, subCallId: 'r1/2', calls: [{ name: 'count', answer: { ok: true, value: 1 } }, { name: 'note' }] })
    await root.approvals.decide('r1', 'allowed-once', { by: 'tester' })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const resumed = await turn.tools.resume(parked.resumeToken!)
    expect(resumed.status).toBe('completed')
    const value = (resumed.value as { value: { a: number; noted: string; b: number; t: number; r: number } }).value
    expect(value).toMatchObject({ a: 1, noted: 'noted hi', b: 2 })
    // Time and randomness as the first run read them, though the resume ran later.
    expect([value.t, value.r]).toEqual([round!.code!.recorded.now[0], round!.code!.recorded.random[0]])
    expect(ran).toEqual(['count 1 r1/1', 'note hi r1/2', 'count 2 r1/3'])
    const events = await journal.read(turn.turnId)
    const seqs = events.map((e) => e.seq)
    expect(new Set(seqs).size).toBe(seqs.length)
    await expectPaired(journal, turn.turnId)
    expect(events.filter((e) => e.kind === 'approval/decided')).toMatchObject([{ callId: 'r1/2', decision: 'allowed-once' }])
  })

  it('lets the program catch a sub-call rejected with decide: the resume runs it again with that call DENIED', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(approvalTools(ran), { codeMode: true, approval: deferApprovals() })
    const turn = await beginTurn(root)
    const source = `const a = await tools.count({ n: 1 })
      let noted
      try { noted = await tools.note({ text: 'hi' }) } catch (error) { noted = [error.code, error.message] }
      const b = await tools.count({ n: 2 })
      return { a, noted, b }`
    const parked = await turn.tools.execute(run('j1', source))
    expect(parked.status).toBe('suspended')
    const decided = await root.approvals.decide('j1', 'rejected', { by: 'tester' })
    // Not settled by the rejection: it waits, decided, for the resume that runs the program.
    expect(decided.decision).toMatchObject({ answer: 'rejected', by: 'tester' })
    expect((await journal.read(turn.turnId)).some((e) => e.kind === 'tool/result' && e.callId === 'j1')).toBe(false)
    const [waiting] = await root.approvals.pending({ principal: 'user-1' })
    expect(waiting).toMatchObject({ callId: 'j1', tool: 'note', decision: { answer: 'rejected' } })
    const resumed = await turn.tools.resume(parked.resumeToken!)
    expect(resumed.status).toBe('completed')
    const value = (resumed.value as { value: { a: number; noted: [string, string]; b: number } }).value
    expect(value).toMatchObject({ a: 1, b: 2 })
    expect(value.noted[0]).toBe('DENIED')
    expect(value.noted[1]).toContain('note')
    expect(ran).toEqual(['count 1 j1/1', 'count 2 j1/3'])
    const events = await journal.read(turn.turnId)
    expect(events.filter((e) => e.kind === 'approval/decided')).toMatchObject([{ callId: 'j1/2', decision: 'rejected' }])
    // The run's own result sits at the seq its round kept, below what the replay wrote after it.
    expect(Object.fromEntries(events.filter((e) => e.kind === 'tool/result').map((e) => [e.callId, (e as { status: string }).status]))).toEqual({
      'j1/1': 'completed',
      'j1/2': 'denied',
      'j1/3': 'completed',
      j1: 'completed',
    })
    const seqs = events.map((e) => e.seq)
    expect(new Set(seqs).size).toBe(seqs.length)
    await expectPaired(journal, turn.turnId)
    expect(await root.approvals.pending({ principal: 'user-1' })).toEqual([])
  })

  it('settles a rejected run DENIED at once, its program not run again, when decide is asked to close it', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(approvalTools(ran), { codeMode: true, approval: deferApprovals() })
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute(run('k1', program))
    expect(parked.status).toBe('suspended')
    await root.approvals.decide('k1', 'rejected', { by: 'tester', close: true })
    const events = await journal.read(turn.turnId)
    expect(events.filter((e) => e.kind === 'tool/result').map((e) => [e.callId, (e as { status: string }).status])).toEqual([
      ['k1/1', 'completed'],
      ['k1/2', 'denied'],
      ['k1', 'denied'],
    ])
    await expectPaired(journal, turn.turnId)
    // A resume now answers with the result that stands; nothing runs again.
    expect(await turn.tools.resume(parked.resumeToken!)).toMatchObject({ status: 'denied', code: 'DENIED' })
    expect(ran).toEqual(['count 1 k1/1'])
  })

  it('does not run again a sub-call the journal holds as OUTCOME_UNKNOWN: the replay rejects it with that code', async () => {
    const ran: string[] = []
    const { root, journal } = await rootWith(approvalTools(ran), { codeMode: true, approval: deferApprovals() })
    const turn = await beginTurn(root)
    const source = `await tools.note({ text: 'x' })
      try { return await tools.count({ n: 2 }) } catch (error) { return error.code }`
    const parked = await turn.tools.execute(run('u1', source))
    expect(parked.status).toBe('suspended')
    // As a crash would leave it: the next sub-call started by an earlier replay, closed by crash repair.
    const at = Date.now()
    await journal.append({ kind: 'tool/call', turnId: turn.turnId, seq: 100, at, callId: 'u1/2', name: 'count', arguments: '{"n":2}', generation: 1, parent: 'u1' })
    await journal.append({ kind: 'tool/result', turnId: turn.turnId, seq: 101, at, callId: 'u1/2', status: 'failed', code: 'OUTCOME_UNKNOWN', content: [{ type: 'text', text: 'unknown' }], durationMs: 0, parent: 'u1' })
    await root.approvals.decide('u1', 'allowed-once', { by: 'tester' })
    const resumed = await turn.tools.resume(parked.resumeToken!)
    expect(resumed.value).toMatchObject({ value: 'OUTCOME_UNKNOWN' })
    expect(ran).toEqual(['note x u1/1'])
  })

  it('settles a resumed program that asks for another sub-call than its round holds as CODE_DIVERGED, running nothing more', async () => {
    const ran: string[] = []
    const dir = mkdtempSync(join(tmpdir(), 'seam-code-'))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'journal.db')
    const { root } = await rootWith(approvalTools(ran), { codeMode: true, approval: deferApprovals(), journal: sqliteJournal(file) as never })
    const turn = await beginTurn(root)
    const parked = await turn.tools.execute(run('d1', program))
    expect(parked.status).toBe('suspended')
    await root.approvals.decide('d1', 'allowed-once', { by: 'tester' })
    // The log now says the first run's first sub-call had other arguments than this program asks for.
    const db = openSqlite(file)
    db.prepare(`UPDATE seam_journal_parked SET call = json_set(call, '$.code.calls[0].arguments', '{"n":7}')`).run()
    db.close()
    const resumed = await turn.tools.resume(parked.resumeToken!)
    expect(resumed).toMatchObject({ status: 'failed', code: 'CODE_DIVERGED' })
    expect(ran).toEqual(['count 1 d1/1'])
  })
})

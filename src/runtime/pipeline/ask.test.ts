import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool, type JournalStore, postgresJournal, type QuestionAnswer, type QuestionPort, type QuestionRequest, type QuestionSchema, sqliteJournal } from 'seam-runtime'
import { beginTurn, rootWith, sleep } from '../../../test/kit.js'
import { EVERY_SHAPE } from '../../../test/question-shapes.js'

async function asking(port: QuestionPort | undefined, options: { unattended?: boolean; timeoutMs?: number; schema?: QuestionSchema; journal?: JournalStore } = {}) {
  const answers: QuestionAnswer[] = []
  const { root } = await rootWith((ctx) => {
    ctx.addTool('setup', defineTool({
      description: 'Asks two questions.',
      input: z.object({}),
      approval: 'never',
      async execute(_args, ctx) {
        answers.push(await ctx.ask({ message: 'Who are you?', schema: options.schema ?? EVERY_SHAPE, timeoutMs: options.timeoutMs }))
        answers.push(await ctx.ask({ message: 'Sure?', schema: { type: 'object', properties: { sure: { type: 'boolean' } } } }))
        return 'done'
      },
    }))
  }, options.journal ? { journal: options.journal } : {})
  const journal = root.journal
  const turn = await beginTurn(root, { ports: port ? { question: port } : {}, unattended: options.unattended })
  const outcome = await turn.tools.execute({ callId: 'c1', name: 'setup', arguments: '{}' })
  await turn.end()
  const events = (await journal.read(turn.turnId)).filter((e) => e.kind.startsWith('question/'))
  return { outcome, answers, events }
}

describe('ctx.ask', () => {
  it('asks the turn’s question port, checks the content against the schema and fills defaults', async () => {
    const asked: QuestionRequest[] = []
    const port: QuestionPort = {
      async elicit(request) {
        asked.push(request)
        if (request.questionId === 'q2') return { action: 'decline' }
        return { action: 'accept', content: { name: 'Ada', email: 'ada@example.org', age: 36, plan: 'pro', region: 'eu', legacy: 'b', colors: ['r', 'g'] } }
      },
    }
    const { outcome, answers, events } = await asking(port)
    expect(outcome).toMatchObject({ status: 'completed', value: 'done' })
    expect(asked.map((q) => [q.questionId, q.callId, q.name, q.message])).toEqual([['q1', 'c1', 'setup', 'Who are you?'], ['q2', 'c1', 'setup', 'Sure?']])
    expect(answers).toEqual([
      { action: 'accept', content: { name: 'Ada', email: 'ada@example.org', age: 36, ratio: 0.5, subscribe: true, plan: 'pro', region: 'eu', legacy: 'b', tags: ['x'], colors: ['r', 'g'] } },
      { action: 'decline' },
    ])
    expect(events.map((e) => [e.kind, (e as { questionId: string }).questionId])).toEqual([
      ['question/asked', 'q1'],
      ['question/answered', 'q1'],
      ['question/asked', 'q2'],
      ['question/answered', 'q2'],
    ])
    expect(events[0]).toMatchObject({ callId: 'c1', name: 'setup', message: 'Who are you?' })
    expect(JSON.parse((events[0] as { schema: string }).schema)).toEqual(EVERY_SHAPE)
    expect(JSON.parse((events[1] as { content: string }).content)).toMatchObject({ name: 'Ada', tags: ['x'] })
    expect(events[3]).toMatchObject({ action: 'decline' })
  })

  it('declines at once without a port, or in an unattended turn, and journals why', async () => {
    const none = await asking(undefined)
    expect(none.answers).toEqual([{ action: 'decline' }, { action: 'decline' }])
    expect(none.events.filter((e) => e.kind === 'question/answered')).toMatchObject([{ reason: 'no-port' }, { reason: 'no-port' }])
    const free: QuestionPort = { ask: async () => 'free-form only' }
    expect((await asking(free)).answers).toEqual([{ action: 'decline' }, { action: 'decline' }])
    const unattended = await asking(undefined, { unattended: true })
    expect(unattended.events.filter((e) => e.kind === 'question/answered')).toMatchObject([{ action: 'decline', reason: 'unattended' }, { action: 'decline', reason: 'unattended' }])
  })

  it('cancels a question past its deadline and aborts the port’s signal', async () => {
    let aborted = false
    const port: QuestionPort = {
      elicit: (request) =>
        new Promise<QuestionAnswer>((resolve) => {
          if (request.questionId === 'q2') resolve({ action: 'accept', content: { sure: true } })
          request.signal.addEventListener('abort', () => {
            aborted = true
          })
        }),
    }
    const started = Date.now()
    const { answers, events } = await asking(port, { timeoutMs: 150 })
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(aborted).toBe(true)
    expect(answers).toEqual([{ action: 'cancel' }, { action: 'accept', content: { sure: true } }])
    expect(events[1]).toMatchObject({ kind: 'question/answered', action: 'cancel', reason: 'timeout' })
  })

  it('declines an answer that does not match the schema, and cancels when the port throws', async () => {
    const wrong: QuestionPort = { elicit: async () => ({ action: 'accept', content: { name: 'Ada', plan: 'enterprise' } }) }
    const bad = await asking(wrong)
    expect(bad.answers[0]).toEqual({ action: 'decline' })
    expect(bad.events[1]).toMatchObject({ action: 'decline', reason: 'invalid' })
    const broken: QuestionPort = { elicit: async () => Promise.reject(new Error('the dialog crashed')) }
    const failed = await asking(broken)
    expect(failed.answers).toEqual([{ action: 'cancel' }, { action: 'cancel' }])
    expect(failed.events[1]).toMatchObject({ action: 'cancel', reason: 'failed' })
  })

  it('refuses a malformed question with INVALID_QUESTION and journals nothing', async () => {
    const codes: string[] = []
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('bad', defineTool({
        description: 'Bad questions.',
        input: z.object({}),
        approval: 'never',
        async execute(_args, ctx) {
          const schemas = [
            undefined,
            { type: 'object', properties: { nested: { type: 'object', properties: {} } } },
            { type: 'object', properties: { list: { type: 'array', items: { type: 'number' } } } },
            { type: 'object', properties: { f: { type: 'string', format: 'phone' } } },
            { type: 'object', properties: {}, required: ['missing'] },
          ]
          for (const schema of schemas) await ctx.ask({ message: 'Q?', schema: schema as never }).catch((e: { code: string }) => codes.push(e.code))
          await ctx.ask({ message: '', schema: { type: 'object', properties: {} } }).catch((e: { code: string }) => codes.push(e.code))
          await sleep(0)
          return 'ok'
        },
      }))
    })
    const turn = await beginTurn(root, { ports: { question: { elicit: async () => ({ action: 'decline' }) } } })
    await turn.tools.execute({ callId: 'c1', name: 'bad', arguments: '{}' })
    expect(codes).toEqual(Array(6).fill('INVALID_QUESTION'))
    expect((await journal.read(turn.turnId)).map((e) => e.kind)).toEqual(['turn/begin', 'tool/call', 'tool/result'])
    await turn.end()
  })

  it.each(['sqlite', 'postgres'] as const)('journals every question and answer in %s, several per call', async (kind) => {
    let journal: JournalStore
    if (kind === 'sqlite') {
      const dir = await mkdtemp(path.join(tmpdir(), 'seam-ask-'))
      onTestFinished(() => rm(dir, { recursive: true, force: true }))
      journal = sqliteJournal(path.join(dir, 'journal.db'))
    } else {
      const url = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
      const schema = `seam_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`
      onTestFinished(async () => {
        const admin = new pg.Client({ connectionString: url })
        await admin.connect()
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        await admin.end()
      })
      journal = postgresJournal(url, { schema })
    }
    const port: QuestionPort = {
      elicit: async (request) => (request.questionId === 'q1' ? { action: 'accept', content: { name: 'Ada', plan: 'free', email: 'x@example.org' } } : { action: 'cancel' }),
    }
    const { answers, events } = await asking(port, { journal: journal! })
    expect(answers.map((a) => a.action)).toEqual(['accept', 'cancel'])
    expect(events.map((e) => `${e.kind} ${(e as { questionId: string }).questionId}`)).toEqual(['question/asked q1', 'question/answered q1', 'question/asked q2', 'question/answered q2'])
    expect(JSON.parse((events[1] as { content: string }).content)).toMatchObject({ name: 'Ada', plan: 'free' })
  })

  it('holds the call’s deadline while a question is open, and counts timeoutMs again after the answer', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('patient', defineTool({
        description: 'Asks, then works a little.',
        input: z.object({ after: z.number() }),
        approval: 'never',
        timeoutMs: 200,
        async execute({ after }, ctx) {
          const answer = await ctx.ask({ message: 'Go?', schema: { type: 'object', properties: { go: { type: 'boolean' } } } })
          await sleep(after)
          return answer.action
        },
      }))
    }, { defaults: { graceMs: 50 } })
    const port: QuestionPort = {
      async elicit() {
        await sleep(450)
        return { action: 'accept', content: { go: true } }
      },
    }
    const turn = await beginTurn(root, { ports: { question: port } })
    const answered = await turn.tools.execute({ callId: 'c1', name: 'patient', arguments: { after: 100 } })
    expect(answered).toMatchObject({ status: 'completed', value: 'accept' })
    expect(answered.durationMs).toBeGreaterThan(500)
    const slow = await turn.tools.execute({ callId: 'c2', name: 'patient', arguments: { after: 1_000 } })
    expect(slow).toMatchObject({ status: 'failed', code: 'TOOL_TIMEOUT' })
    // Stopped about 200 ms after the answer (450 + 200 + grace), not when its 1,000 ms of work ended.
    expect(slow.durationMs).toBeLessThan(1_300)
    await turn.end()
  })
})

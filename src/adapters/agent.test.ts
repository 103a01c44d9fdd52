import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { createRoot, deferApprovals, defineTool, memoryJournal, sqliteJournal } from 'seam-runtime'
import { toAnthropicHistory } from '../anthropic.js'
import { toChatHistory, toResponsesHistory } from '../openai.js'
import { beginTurn, rootWith } from '../../test/kit.js'
import { observeApprovals } from './agent-approvals.js'
import { type AgentEvent, runAgent } from './agent.js'
import { anthropicReply, chatReply, modelServer, responsesReply } from './fixtures/model-server.js'
import { adapterTools } from './fixtures/tools.js'
import type { AgentMessage } from './messages.js'
import type { ModelClient } from './model-client.js'
import { openAiChatModel } from './model-client.js'
import { transcript } from './transcript.js'

async function serve(script: Parameters<typeof modelServer>[0]) {
  const server = await modelServer(script)
  onTestFinished(() => server.close())
  return server
}

async function collect(run: AsyncIterable<AgentEvent>): Promise<string[]> {
  const seen: string[] = []
  for await (const event of run) {
    if (event.type === 'tool-started') seen.push(`started ${event.call.callId}`)
    else if (event.type === 'tool-settled') seen.push(`settled ${event.outcome.callId} ${event.outcome.status}`)
    else if (event.type === 'assistant') seen.push(`assistant ${event.step}: ${event.text}`)
    else if (event.type === 'model-step') seen.push(`model ${event.step}`)
    else if (event.type === 'tool-progress') seen.push(`progress ${event.progress.callId} ${event.progress.done}/${event.progress.total}`)
    else if (event.type === 'text-delta' || event.type === 'tool-call-delta') continue
    else seen.push(`${event.type} ${event.callId}`)
  }
  return seen
}

describe('runAgent over an OpenAI-compatible endpoint', () => {
  it('loops model → calls → results until the final answer, reporting each step, with skills as system instructions', async () => {
    const { root } = await rootWith((ctx) => {
      adapterTools()(ctx)
      ctx.addSkill('triage', { description: 'How to triage.', instructions: 'Triage first.', always: true })
    })
    const server = await serve({
      chat: [
        chatReply(null, [
          { id: 'call_a', name: 'lookup', arguments: '{"id":"A","delayMs":30}' },
          { id: 'call_b', name: 'lookup', arguments: '{"id":"B"}' },
        ]),
        chatReply('A and B are open.'),
      ],
    })
    const turn = await beginTurn(root)
    const run = runAgent({ turn, model: openAiChatModel({ baseUrl: `${server.url}/v1`, apiKey: 'k', model: 'scripted' }), messages: [{ role: 'user', content: 'A and B?' }] })

    expect(await collect(run)).toEqual([
      'model 1',
      'assistant 1: ',
      'started call_a',
      'started call_b',
      'settled call_a completed',
      'settled call_b completed',
      'model 2',
      'assistant 2: A and B are open.',
    ])
    const result = await run.result
    expect(result).toMatchObject({ reason: 'final', text: 'A and B are open.', steps: 2 })
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant'])
    const sent = server.requests.chat[1]!.messages as { role: string; content: string }[]
    expect(sent[0]).toEqual({ role: 'system', content: expect.stringContaining('Triage first.') })
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool'])
    expect(server.refusals).toEqual([])
  })

  it('stops after maxSteps model requests, every call still answered', async () => {
    const { root } = await rootWith(adapterTools())
    const call = (id: string) => chatReply(null, [{ id, name: 'lookup', arguments: '{"id":"A"}' }])
    const server = await serve({ chat: [call('c1'), call('c2'), call('c3')] })
    const turn = await beginTurn(root)
    const run = runAgent({ turn, model: openAiChatModel({ baseUrl: `${server.url}/v1`, model: 'm' }), messages: [{ role: 'user', content: 'Loop.' }], maxSteps: 2 })
    const result = await run.result
    expect(result).toMatchObject({ reason: 'max-steps', steps: 2 })
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool'])
    expect(server.requests.chat).toHaveLength(2)
  })

  it('stops when aborted during a model request, and during a batch once its calls have settled', async () => {
    const { root } = await rootWith(adapterTools())
    const turn = await beginTurn(root)
    const hanging: ModelClient = { complete: ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))) }
    const controller = new AbortController()
    const waiting = runAgent({ turn, model: hanging, messages: [{ role: 'user', content: 'Hi' }], signal: controller.signal })
    setTimeout(() => controller.abort(), 10)
    expect(await waiting.result).toMatchObject({ reason: 'aborted', steps: 1 })

    const stalling: ModelClient = { complete: async () => ({ text: '', toolCalls: [{ callId: 's1', name: 'stall', arguments: '{}' }] }) }
    const second = new AbortController()
    const run = runAgent({ turn, model: stalling, messages: [{ role: 'user', content: 'Hi' }], signal: second.signal })
    setTimeout(() => second.abort(), 15)
    const result = await run.result
    expect(result.reason).toBe('aborted')
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', result: { callId: 's1', status: 'cancelled' } })
  })

  it('reports a running call’s progress between its start and its result', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('crawl', defineTool({
        description: 'Crawls slowly.',
        input: z.object({}),
        approval: 'never',
        async execute(_args, ctx) {
          for (let done = 1; done <= 3; done++) {
            await new Promise((resolve) => setTimeout(resolve, 110))
            ctx.progress({ done, total: 3 })
          }
          return 'crawled'
        },
      }))
    })
    const turn = await beginTurn(root)
    const replies = [{ text: '', toolCalls: [{ callId: 'p1', name: 'crawl', arguments: '{}' }] }, { text: 'Crawled.', toolCalls: [] }]
    const model: ModelClient = { complete: async () => replies.shift()! }
    const seen = await collect(runAgent({ turn, model, messages: [{ role: 'user', content: 'Crawl.' }] }))
    expect(seen).toEqual(['model 1', 'assistant 1: ', 'started p1', 'progress p1 1/3', 'progress p1 2/3', 'progress p1 3/3', 'settled p1 completed', 'model 2', 'assistant 2: Crawled.'])
  })

  it('reports approval questions and answers live when the turn asks through observeApprovals', async () => {
    const approvals = observeApprovals({ request: async () => 'allowed-once' })
    const { root } = await rootWith(adapterTools())
    const turn = await beginTurn(root, { ports: { approval: approvals } })
    const replies = [{ text: '', toolCalls: [{ callId: 'd1', name: 'delete_everything', arguments: '{"confirm":true}' }] }, { text: 'Deleted.', toolCalls: [] }]
    const model: ModelClient = { complete: async () => replies.shift()! }
    const seen = await collect(runAgent({ turn, model, messages: [{ role: 'user', content: 'Delete.' }], approvals }))
    expect(seen).toEqual(['model 1', 'assistant 1: ', 'started d1', 'approval-asked d1', 'approval-answered d1', 'settled d1 completed', 'model 2', 'assistant 2: Deleted.'])
  })

  it('rejects with the endpoint’s message when the model API refuses the request', async () => {
    const { root } = await rootWith(adapterTools())
    const server = await serve({ chat: [] })
    const turn = await beginTurn(root)
    const run = runAgent({ turn, model: openAiChatModel({ baseUrl: `${server.url}/v1`, model: 'm', apiKey: 'sk-secret' }), messages: [{ role: 'user', content: 'Hi' }] })
    await expect(run.result).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE', message: expect.stringContaining('no scripted chat reply left') })
    await expect(run.result).rejects.not.toThrow(/sk-secret/)
  })
})

const crashScript = fileURLToPath(new URL('./fixtures/crash-mid-turn.ts', import.meta.url))

describe('transcript', () => {
  it('rebuilds a crashed turn with every call answered, in a form all three APIs accept', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-transcript-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'journal.db')
    await expect(promisify(execFile)(process.execPath, ['--import', 'tsx', crashScript, file])).rejects.toMatchObject({ signal: 'SIGKILL' })

    // Before any repair the second call has no result at all; after it, OUTCOME_UNKNOWN. Both read the same.
    const unrepaired = sqliteJournal(file)
    const before = await transcript(unrepaired, { turnId: 'turn-crash' })
    await unrepaired.close()
    await using root = await createRoot({ plugin: { name: 'root' }, journal: sqliteJournal(file) })
    const history = await transcript(root.journal, { turnId: 'turn-crash' })
    expect(history).toEqual(before)
    // lookup is exclusive, so call_2 was journaled after call_1's result: the journal cannot tell
    // they came in one model message, and each gets its own assistant message (valid for every API).
    expect(history).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ callId: 'call_1', name: 'lookup', arguments: '{"id":"T-1"}' }] },
      { role: 'tool', result: expect.objectContaining({ callId: 'call_1', name: 'lookup', status: 'completed', content: [{ type: 'text', text: '{"id":"T-1"}' }] }) },
      { role: 'assistant', content: '', toolCalls: [{ callId: 'call_2', name: 'deploy', arguments: '{"env":"prod"}' }] },
      {
        role: 'tool',
        result: {
          callId: 'call_2',
          name: 'deploy',
          status: 'failed',
          code: 'OUTCOME_UNKNOWN',
          content: [{ type: 'text', text: 'The call to "deploy" was interrupted before its result was recorded: it may or may not have run. Check its effect before you repeat it.' }],
        },
      },
    ])

    const server = await serve({ chat: [chatReply('ok')], responses: [responsesReply('ok')], messages: [anthropicReply('ok'), anthropicReply('ok')] })
    const resumed: AgentMessage[] = [{ role: 'user', content: 'Deploy T-1.' }, ...history, { role: 'user', content: 'Did it deploy?' }]
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'k', maxRetries: 0 })
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 })
    await openai.chat.completions.create({ model: 'm', messages: toChatHistory(resumed) })
    await openai.responses.create({ model: 'm', input: toResponsesHistory(resumed) })
    await anthropic.messages.create({ model: 'm', max_tokens: 10, ...toAnthropicHistory(resumed) })
    // The transcript alone starts with the assistant's calls, which Anthropic refuses as a first message.
    await anthropic.messages.create({ model: 'm', max_tokens: 10, ...toAnthropicHistory([...history, { role: 'user', content: 'Go on.' }]) })
    expect(server.refusals).toEqual([])
  }, 30_000)

  it('answers a call parked for approval with a result saying it has not run yet', async () => {
    const { root } = await rootWith(adapterTools())
    const turn = await beginTurn(root, { ports: { approval: deferApprovals() } })
    const outcome = await turn.tools.execute({ callId: 'p1', name: 'delete_everything', arguments: '{"confirm":true}' })
    expect(outcome).toMatchObject({ status: 'suspended', code: 'APPROVAL_PENDING' })
    expect(await transcript(root.journal, { turnId: turn.turnId })).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ callId: 'p1', name: 'delete_everything', arguments: '{"confirm":true}' }] },
      {
        role: 'tool',
        result: {
          callId: 'p1',
          name: 'delete_everything',
          status: 'suspended',
          code: 'APPROVAL_PENDING',
          content: [{ type: 'text', text: 'The call to "delete_everything" is waiting for a person\'s approval and has not run yet.' }],
        },
      },
    ])
  })

  it.each(['memory', 'sqlite'] as const)('reads a whole session oldest turn first from a %s journal, other sessions left out', async (kind) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-session-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const journal = kind === 'sqlite' ? sqliteJournal(path.join(dir, 'journal.db')) : memoryJournal()
    const { root } = await rootWith(adapterTools(), { journal })
    for (const [id, session] of [['t1', 'chat-7'], ['t2', 'other'], ['t3', 'chat-7'], ['t4', 'chat-7']]) {
      const turn = await beginTurn(root, { turnId: id, session })
      await turn.tools.execute({ callId: `c-${id}`, name: 'lookup', arguments: `{"id":"${id}"}` })
      await turn.end()
    }
    const history = await transcript(root.journal, { session: 'chat-7' })
    expect(history.filter((m) => m.role === 'tool').map((m) => (m as { result: { callId: string } }).result.callId)).toEqual(['c-t1', 'c-t3', 'c-t4'])
  })

})

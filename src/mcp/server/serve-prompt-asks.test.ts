import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, type Root } from '../../index.js'
import { rawRequest } from '../fixtures/raw-request.js'
import { type ServePlugin, servePlugin } from '../fixtures/serve-plugin.js'
import { serveHttp } from './serve.js'

/** A prompt asking its required `context` under the key `user_context`, and an optional `tone` under its own name. */
const SKILL = `---
description: Write with a context.
arguments:
  - name: context
    required: true
    ask:
      key: user_context
      message: What context should the prompt use?
  - name: tone
    description: How it sounds
    ask: Which tone?
---
Context: {{context}}; tone: {{tone}}.
`

type Reply = { action: 'accept'; content: Record<string, string> } | { action: 'decline' }

/** A real SDK client answering each form with `reply(message)`; pinned to 2026-07-28 (the SDK drives the rounds) or not. */
async function connect(url: string, options: { modern?: boolean; elicits?: boolean; reply?: (message: string) => Reply } = {}) {
  const elicits = options.elicits ?? true
  const client = new Client(
    { name: 'prompt-asks', version: '1.0.0' },
    { capabilities: elicits ? { elicitation: { form: {} } } : {}, ...(options.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' as const } } } : {}) },
  )
  const seen: string[] = []
  if (elicits) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { message: string; requestedSchema: unknown }
      seen.push(`${params.message} ${JSON.stringify(params.requestedSchema)}`)
      return options.reply?.(params.message) ?? { action: 'accept', content: params.message.startsWith('What') ? { context: 'a ticket' } : { tone: 'dry' } }
    })
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  onTestFinished(() => client.close())
  return { client, seen }
}

/** One raw 2026-07-28 `prompts/get`, from a client that can elicit unless `capabilities` says otherwise. */
const rpc = (url: string, params: Record<string, unknown>, capabilities: object = { elicitation: {} }) => rawRequest(url, 'prompts/get', params, { capabilities })

const accept = (content: Record<string, string>) => ({ action: 'accept', content })
const textOf = (result: Record<string, unknown> | { messages: unknown[] }) => ((result as { messages: { content: { text: string } }[] }).messages.at(-1)?.content.text ?? '')

describe('a served prompt asking the person for the arguments it was not given', () => {
  let plugin: ServePlugin
  let root: Root
  let server: { url: string; close(): Promise<void> }

  beforeAll(async () => {
    plugin = await servePlugin()
    await plugin.put('agent/skills/write.md', SKILL)
    root = await createRoot({ dir: plugin.dir })
    server = await serveHttp(root, { port: 0 })
  })
  afterAll(async () => {
    await server.close()
    await root.close()
    await plugin.remove()
  })

  it('lists the prompt\'s arguments without how they are asked', async () => {
    const { client } = await connect(server.url)
    const { prompts } = await client.listPrompts()
    expect(prompts.find((p) => p.name === 'write')?.arguments).toEqual([{ name: 'context', required: true }, { name: 'tone', description: 'How it sounds' }])
  })

  it('on 2026-07-28 answers input_required with one form per missing argument under the skill\'s keys, and the retry\'s answers fill the prompt', async () => {
    const first = await rpc(server.url, { name: 'write' })
    expect(first.error).toBeUndefined()
    expect(first.result).toMatchObject({ resultType: 'input_required' })
    expect(first.result?.requestState).toBeUndefined()
    expect(first.result?.inputRequests).toEqual({
      user_context: {
        method: 'elicitation/create',
        params: expect.objectContaining({ message: 'What context should the prompt use?', requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] } }),
      },
      tone: { method: 'elicitation/create', params: expect.objectContaining({ message: 'Which tone?', requestedSchema: { type: 'object', properties: { tone: { type: 'string', description: 'How it sounds' } } } }) },
    })
    const done = await rpc(server.url, { name: 'write', inputResponses: { user_context: accept({ context: 'a ticket' }), tone: accept({ tone: 'dry' }) } })
    expect(done.result?.resultType).toBe('complete')
    expect(textOf(done.result!)).toBe('Context: a ticket; tone: dry.')
  })

  it('on 2026-07-28 asks again, never an error, for a missing or wrong key or an answer without text, and keeps the answers already given in a sealed state', async () => {
    const wrong = await rpc(server.url, { name: 'write', inputResponses: { wrong_key: accept({ data: 'x' }), tone: accept({ tone: 'warm' }) } })
    expect(wrong.error).toBeUndefined()
    expect(Object.keys(wrong.result?.inputRequests ?? {})).toEqual(['user_context'])
    expect(typeof wrong.result?.requestState).toBe('string')
    expect(wrong.result?.requestState).not.toContain('warm')
    const empty = await rpc(server.url, { name: 'write', inputResponses: { user_context: accept({ other: 'x' }) }, requestState: wrong.result?.requestState })
    expect(Object.keys(empty.result?.inputRequests ?? {})).toEqual(['user_context'])
    const done = await rpc(server.url, { name: 'write', inputResponses: { user_context: accept({ context: 'late' }) }, requestState: empty.result?.requestState })
    expect(textOf(done.result!)).toBe('Context: late; tone: warm.')
  })

  it('on 2026-07-28 asks nothing for arguments given, refuses a declined required one, and leaves a declined optional one out', async () => {
    const given = await rpc(server.url, { name: 'write', arguments: { context: 'given', tone: 'plain' } })
    expect(textOf(given.result!)).toBe('Context: given; tone: plain.')
    const declined = await rpc(server.url, { name: 'write', inputResponses: { user_context: { action: 'decline' }, tone: accept({ tone: 'x' }) } })
    expect(declined.error).toMatchObject({ code: -32602, message: 'Missing required argument for prompt write: context (the person answered decline)' })
    const optional = await rpc(server.url, { name: 'write', arguments: { context: 'c' }, inputResponses: { tone: { action: 'cancel' } } })
    expect(textOf(optional.result!)).toBe('Context: c; tone: .')
    const tampered = await rpc(server.url, { name: 'write', requestState: 's1.AAAA' })
    expect(tampered.error?.code).toBe(-32602)
  })

  it('on 2026-07-28 refuses the missing required argument as before when the client cannot answer a form, or passes one the prompt lacks', async () => {
    const cannot = await rpc(server.url, { name: 'write' }, {})
    expect(cannot.error).toMatchObject({ code: -32602, message: 'Missing required argument for prompt write: context' })
    const unknown = await rpc(server.url, { name: 'write', arguments: { nope: '1' } })
    expect(unknown.error).toMatchObject({ code: -32602, message: expect.stringContaining('has no argument "nope"') })
  })

  it('on 2026-07-28 a real SDK client answers the round from its elicitation handler and gets the prompt', async () => {
    const { client, seen } = await connect(server.url, { modern: true })
    const prompt = await client.getPrompt({ name: 'write' })
    expect(textOf(prompt)).toBe('Context: a ticket; tone: dry.')
    expect(seen.sort()).toEqual(['What context should the prompt use? {"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}', 'Which tone? {"type":"object","properties":{"tone":{"type":"string","description":"How it sounds"}}}'])
  })

  it('on 2025-11-25 sends elicitation/create for each missing argument, one after the other, and fills the prompt', async () => {
    const { client, seen } = await connect(server.url)
    const prompt = await client.getPrompt({ name: 'write', arguments: { tone: 'bold' } })
    expect(textOf(prompt)).toBe('Context: a ticket; tone: bold.')
    expect(seen).toEqual(['What context should the prompt use? {"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}'])
  })

  it('on 2025-11-25 refuses a declined required argument, and the missing one as before when the client declared no elicitation', async () => {
    const { client } = await connect(server.url, { reply: () => ({ action: 'decline' }) })
    await expect(client.getPrompt({ name: 'write' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('context (the person answered decline)') })
    const { client: plain } = await connect(server.url, { elicits: false })
    await expect(plain.getPrompt({ name: 'write' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Missing required argument for prompt write: context') })
    expect(textOf(await plain.getPrompt({ name: 'write', arguments: { context: 'c' } }))).toBe('Context: c; tone: .')
  })
})

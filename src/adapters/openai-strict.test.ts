import OpenAI from 'openai'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool, type PluginContext } from 'seam-runtime'
import { beginTurn, rootWith } from '../../test/kit.js'
import { chatReply, modelServer, responsesReply } from './fixtures/model-server.js'
import { fromChatToolCalls, fromResponsesOutput, toChatTools, toResponsesTools } from '../openai.js'

async function serve(script: Parameters<typeof modelServer>[0]) {
  const server = await modelServer(script)
  onTestFinished(() => server.close())
  return { server, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key', maxRetries: 0 }) }
}

/** `post` takes a union of object shapes and a list of a discriminated union, each with optional properties. */
function postTool(received: unknown[]) {
  return (ctx: PluginContext) => {
    ctx.addTool(
      'post',
      defineTool({
        description: 'Post to a user or a group, in steps.',
        input: z.object({
          to: z.union([z.object({ user: z.string(), note: z.string().optional() }), z.object({ group: z.string(), mention: z.boolean().optional() })]),
          steps: z.array(z.discriminatedUnion('op', [z.object({ op: z.literal('wait'), ms: z.number().int().optional() }), z.object({ op: z.literal('say'), text: z.string() })])),
        }),
        approval: 'never',
        execute: (args) => {
          received.push(args)
          return 'posted'
        },
      }),
    )
  }
}

/** What a model in strict mode sends: every property present, `null` for the optional ones it leaves out. */
const STRICT_ARGS = JSON.stringify({
  to: { group: 'ops', mention: null },
  steps: [
    { op: 'wait', ms: null },
    { op: 'say', text: 'hi' },
  ],
})
const RECEIVED = { to: { group: 'ops' }, steps: [{ op: 'wait' }, { op: 'say', text: 'hi' }] }

describe('strict mode through a real turn', () => {
  it('drops the nulls strict mode introduced inside anyOf branches and array items of a Chat Completions call, so it runs', async () => {
    const received: unknown[] = []
    const { root } = await rootWith(postTool(received))
    const { server, client } = await serve({ chat: [chatReply(null, [{ id: 'call_p', name: 'post', arguments: STRICT_ARGS }])] })
    const turn = await beginTurn(root)
    const tools = toChatTools(turn.capabilities, { strict: true })
    expect(tools[0]!.function.strict).toBe(true)
    const message = (await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'Post.' }], tools })).choices[0]!.message
    const [call] = fromChatToolCalls(message, tools)
    expect(await turn.tools.execute(call!)).toMatchObject({ status: 'completed' })
    expect(received).toEqual([RECEIVED])
    expect(server.refusals).toEqual([])
  })

  it('drops them from a Responses function call too', async () => {
    const received: unknown[] = []
    const { root } = await rootWith(postTool(received))
    const { server, client } = await serve({ responses: [responsesReply(null, [{ id: 'call_p', name: 'post', arguments: STRICT_ARGS }])] })
    const turn = await beginTurn(root)
    const tools = toResponsesTools(turn.capabilities, { strict: true })
    const response = await client.responses.create({ model: 'scripted', input: [{ role: 'user', content: 'Post.' }], tools })
    const [call] = fromResponsesOutput(response.output, tools)
    expect(await turn.tools.execute(call!)).toMatchObject({ status: 'completed' })
    expect(received).toEqual([RECEIVED])
    expect(server.refusals).toEqual([])
  })

  it('keeps a zod default in the description the model reads, and applies it when the model sends null', async () => {
    const received: unknown[] = []
    const { root } = await rootWith((ctx) => {
      ctx.addTool(
        'search',
        defineTool({
          description: 'Search.',
          input: z.object({ query: z.string(), limit: z.number().int().max(1000).default(500).describe('How many.') }),
          approval: 'never',
          execute: (args) => {
            received.push(args)
            return 'found'
          },
        }),
      )
    })
    const { server, client } = await serve({ chat: [chatReply(null, [{ id: 'call_s', name: 'search', arguments: '{"query":"q","limit":null}' }])] })
    const turn = await beginTurn(root)
    const tools = toChatTools(turn.capabilities, { strict: true })
    expect(tools[0]!.function).toMatchObject({ strict: true, parameters: { properties: { limit: { description: 'How many. (default: 500)' } } } })
    const message = (await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'Find q.' }], tools })).choices[0]!.message
    expect(server.requests.chat[0]!.tools).toMatchObject([{ function: { parameters: { properties: { limit: { description: 'How many. (default: 500)' } } } } }])
    expect(await turn.tools.execute(fromChatToolCalls(message, tools)[0]!)).toMatchObject({ status: 'completed' })
    expect(received).toEqual([{ query: 'q', limit: 500 }])
    expect(server.refusals).toEqual([])
  })
})

import OpenAI from 'openai'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool } from 'seam-runtime'
import { beginTurn, expectPaired, rootWith } from '../../test/kit.js'
import { chatReply, modelServer, responsesReply } from './fixtures/model-server.js'
import { adapterTools, PIXEL_PNG } from './fixtures/tools.js'
import { fromChatToolCalls, fromResponsesOutput, toChatMessages, toChatTools, toResponsesItems, toResponsesTools } from '../openai.js'

async function serve(script: Parameters<typeof modelServer>[0]) {
  const server = await modelServer(script)
  onTestFinished(() => server.close())
  return { server, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key', maxRetries: 0 }) }
}

const calls = [
  { id: 'call_a', name: 'lookup', arguments: '{"id":"A","delayMs":60}' },
  { id: 'call_b', name: 'lookup', arguments: '{"id":"B","delayMs":0}' },
  { id: 'call_c', name: 'lookup', arguments: '{"id":"C","delayMs":20}' },
]

describe('seam-runtime/openai against a scripted Chat Completions server', () => {
  it('runs parallel tool calls concurrently and answers them in model order', async () => {
    const started: string[] = []
    const { root, journal } = await rootWith(adapterTools(started))
    const { server, client } = await serve({ chat: [chatReply(null, calls), chatReply('A, B and C are open.')] })
    const turn = await beginTurn(root)
    const tools = toChatTools(turn.capabilities, { strict: true })
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Check A, B and C.' }]

    const first = await client.chat.completions.create({ model: 'scripted', messages, tools })
    const message = first.choices[0]!.message
    const outcomes = await turn.tools.executeBatch(fromChatToolCalls(message, tools))
    messages.push(message, ...toChatMessages(outcomes))
    const second = await client.chat.completions.create({ model: 'scripted', messages, tools })

    expect(second.choices[0]!.message.content).toBe('A, B and C are open.')
    expect(started.sort()).toEqual(['call_a', 'call_b', 'call_c'])
    const results = (await journal.read(turn.turnId)).filter((e) => e.kind === 'tool/result').map((e) => e.callId)
    expect(results).toEqual(['call_a', 'call_b', 'call_c'])
    expect(server.requests.chat[1]!.messages).toMatchObject([
      { role: 'user' },
      { role: 'assistant', tool_calls: [{ id: 'call_a' }, { id: 'call_b' }, { id: 'call_c' }] },
      { role: 'tool', tool_call_id: 'call_a', content: '{"id":"A","title":"Ticket A"}' },
      { role: 'tool', tool_call_id: 'call_b', content: '{"id":"B","title":"Ticket B"}' },
      { role: 'tool', tool_call_id: 'call_c', content: '{"id":"C","title":"Ticket C"}' },
    ])
    expect(server.refusals).toEqual([])
    await expectPaired(journal, turn.turnId)
  })

  it('turns a denied, a failed, a timed-out and a cancelled call into tool messages that say so', async () => {
    const { root } = await rootWith(adapterTools(), { approval: { request: async () => 'rejected' } })
    const { server, client } = await serve({
      chat: [
        chatReply(null, [
          { id: 'call_deny', name: 'delete_everything', arguments: '{"confirm":true}' },
          { id: 'call_fail', name: 'explode', arguments: '{}' },
          { id: 'call_slow', name: 'stall', arguments: '{"timeoutMs":null}' },
        ]),
        chatReply(null, [{ id: 'call_cancel', name: 'stall', arguments: '{}' }]),
        chatReply('Sorry.'),
      ],
    })
    const turn = await beginTurn(root)
    const tools = toChatTools(turn.capabilities, { strict: true })
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Clean up.' }]
    const first = (await client.chat.completions.create({ model: 'scripted', messages, tools })).choices[0]!.message
    const settled = await turn.tools.executeBatch(fromChatToolCalls(first, tools))
    messages.push(first, ...toChatMessages(settled))
    const second = (await client.chat.completions.create({ model: 'scripted', messages, tools })).choices[0]!.message
    const controller = new AbortController()
    const cancelled = turn.tools.executeBatch(fromChatToolCalls(second, tools), { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('the user pressed stop')), 10)
    messages.push(second, ...toChatMessages(await cancelled))
    await client.chat.completions.create({ model: 'scripted', messages, tools })

    expect(settled.map((o) => [o.status, o.code])).toEqual([
      ['denied', 'DENIED'],
      ['failed', 'TOOL_ERROR'],
      ['failed', 'TOOL_TIMEOUT'],
    ])
    const toolMessages = (server.requests.chat[2]!.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool')
    expect(toolMessages.map((m) => m.content)).toEqual([
      'The user rejected the call to "delete_everything". Do not retry it unchanged; ask what they want instead.',
      'The tool "explode" failed: the disk is on fire',
      'The tool "stall" did not finish within 40 ms and was stopped. Try a smaller request.',
      'The call to "stall" was cancelled.',
    ])
    expect(server.refusals).toEqual([])
  })

  it('sends images and audio back in a user message after the tool messages, which take text only', async () => {
    const { root } = await rootWith(adapterTools())
    const { server, client } = await serve({
      chat: [
        chatReply(null, [
          { id: 'call_shot', name: 'snapshot', arguments: '{"label":"home"}' },
          { id: 'call_rec', name: 'record', arguments: '{}' },
          { id: 'call_note', name: 'remember', arguments: '{"note":"n1"}' },
        ]),
        chatReply('A white pixel.'),
      ],
    })
    const turn = await beginTurn(root)
    const tools = toChatTools(turn.capabilities)
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Look.' }]
    const first = (await client.chat.completions.create({ model: 'scripted', messages, tools })).choices[0]!.message
    messages.push(first, ...toChatMessages(await turn.tools.executeBatch(fromChatToolCalls(first, tools))))
    await client.chat.completions.create({ model: 'scripted', messages, tools })

    expect(server.requests.chat[1]!.messages).toEqual([
      { role: 'user', content: 'Look.' },
      expect.objectContaining({ role: 'assistant' }),
      { role: 'tool', tool_call_id: 'call_shot', content: 'Screenshot "home"\n[image image/png: in the next user message]' },
      { role: 'tool', tool_call_id: 'call_rec', content: '[audio audio/wav: in the next user message]' },
      { role: 'tool', tool_call_id: 'call_note', content: 'stored' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Returned by the tool call call_shot (snapshot):' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_PNG}` } },
          { type: 'text', text: 'Returned by the tool call call_rec (record):' },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'text', text: '<context id="note-policy" role="system">\nNote stored: n1. Mention it in the answer.\n</context>' },
        ],
      },
    ])
    expect(server.refusals).toEqual([])
  })

  it('drops the nulls strict mode sends for optional properties, so the call validates', async () => {
    const { root } = await rootWith(adapterTools())
    const { client } = await serve({ chat: [chatReply(null, [{ id: 'call_n', name: 'lookup', arguments: '{"id":"A","delayMs":null}' }])] })
    const turn = await beginTurn(root)
    const tools = toChatTools(turn.capabilities, { strict: true })
    const lookup = tools.find((tool) => tool.function.name === 'lookup')!
    expect(lookup.function).toMatchObject({
      strict: true,
      parameters: { required: ['id', 'delayMs'], additionalProperties: false, properties: { delayMs: { type: ['integer', 'null'] } } },
    })
    const message = (await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'A?' }], tools })).choices[0]!.message
    const [call] = fromChatToolCalls(message, tools)
    expect(call).toEqual({ callId: 'call_n', name: 'lookup', arguments: '{"id":"A"}' })
    expect((await turn.tools.execute(call!)).status).toBe('completed')
  })

  it('sends a tool whose schema cannot be strict as non-strict and says why', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('tag', defineTool({ description: 'Tags.', input: z.object({ tags: z.record(z.string(), z.string()) }), approval: 'never', execute: () => 'ok' }))
    })
    const turn = await beginTurn(root)
    const reasons: string[] = []
    const [tool] = toChatTools(turn.capabilities, { strict: true, onNotStrict: (name, reason) => reasons.push(`${name}: ${reason}`) })
    expect(tool!.function.strict).toBe(false)
    expect(tool!.function.parameters).not.toHaveProperty('$schema')
    expect(reasons).toEqual(['tag: $.properties.tags: `propertyNames` (a map with open keys) cannot be strict'])
  })
})

describe('seam-runtime/openai against a scripted Responses server', () => {
  it('maps parallel function calls, failures, images and contexts to input items the API accepts', async () => {
    const { root, journal } = await rootWith(adapterTools(), { approval: { request: async () => 'rejected' } })
    const { server, client } = await serve({
      responses: [
        responsesReply('Checking.', [
          calls[0]!,
          calls[1]!,
          { id: 'call_deny', name: 'delete_everything', arguments: '{"confirm":true}' },
          { id: 'call_shot', name: 'snapshot', arguments: '{"label":"x"}' },
          { id: 'call_note', name: 'remember', arguments: '{"note":"n2"}' },
        ]),
        responsesReply('Done.'),
      ],
    })
    const turn = await beginTurn(root)
    const tools = toResponsesTools(turn.capabilities, { strict: true })
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Go.' }]
    const first = await client.responses.create({ model: 'scripted', input, tools })
    const outcomes = await turn.tools.executeBatch(fromResponsesOutput(first.output, tools))
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), ...toResponsesItems(outcomes))
    const second = await client.responses.create({ model: 'scripted', input, tools })

    expect(second.output_text).toBe('Done.')
    const sent = server.requests.responses[1]!.input as Record<string, unknown>[]
    expect(sent.filter((item) => item.type === 'function_call_output')).toEqual([
      { type: 'function_call_output', call_id: 'call_a', output: '{"id":"A","title":"Ticket A"}' },
      { type: 'function_call_output', call_id: 'call_b', output: '{"id":"B","title":"Ticket B"}' },
      { type: 'function_call_output', call_id: 'call_deny', output: expect.stringContaining('The user rejected the call') },
      {
        type: 'function_call_output',
        call_id: 'call_shot',
        output: [
          { type: 'input_text', text: 'Screenshot "x"' },
          { type: 'input_image', image_url: `data:image/png;base64,${PIXEL_PNG}`, detail: 'auto' },
        ],
      },
      { type: 'function_call_output', call_id: 'call_note', output: 'stored' },
    ])
    expect(sent.at(-1)).toEqual({ role: 'user', content: [{ type: 'input_text', text: expect.stringContaining('Note stored: n2') }] })
    expect(server.refusals).toEqual([])
    await expectPaired(journal, turn.turnId)
  })
})

import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it, onTestFinished } from 'vitest'
import { beginTurn, expectPaired, rootWith } from '../../test/kit.js'
import { fromAnthropicContent, toAnthropicToolResults, toAnthropicTools } from '../anthropic.js'
import { anthropicReply, modelServer } from './fixtures/model-server.js'
import { adapterTools, PIXEL_PNG } from './fixtures/tools.js'

async function serve(messages: Parameters<typeof modelServer>[0]['messages']) {
  const server = await modelServer({ messages })
  onTestFinished(() => server.close())
  return { server, client: new Anthropic({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 }) }
}

describe('seam-runtime/anthropic against a scripted Messages server', () => {
  it('answers parallel tool_use blocks with tool_result blocks in model order', async () => {
    const started: string[] = []
    const { root, journal } = await rootWith(adapterTools(started))
    const { server, client } = await serve([
      anthropicReply('Looking.', [
        { id: 'toolu_a', name: 'lookup', arguments: '{"id":"A","delayMs":50}' },
        { id: 'toolu_b', name: 'lookup', arguments: '{"id":"B"}' },
      ]),
      anthropicReply('Both open.'),
    ])
    const turn = await beginTurn(root)
    const tools = toAnthropicTools(turn.capabilities)
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'A and B?' }]
    const first = await client.messages.create({ model: 'scripted', max_tokens: 100, messages, tools })
    const outcomes = await turn.tools.executeBatch(fromAnthropicContent(first.content))
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: toAnthropicToolResults(outcomes) })
    const second = await client.messages.create({ model: 'scripted', max_tokens: 100, messages, tools })

    expect(second.content).toEqual([{ type: 'text', text: 'Both open.' }])
    expect(started.sort()).toEqual(['toolu_a', 'toolu_b'])
    expect(tools.find((tool) => tool.name === 'lookup')!.input_schema).not.toHaveProperty('$schema')
    expect(server.requests.messages[1]!.messages).toMatchObject([
      {},
      {},
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: '{"id":"A","title":"Ticket A"}' }] },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: '{"id":"B","title":"Ticket B"}' }] },
        ],
      },
    ])
    expect(server.refusals).toEqual([])
    await expectPaired(journal, turn.turnId)
  })

  it('flags denied, failed, timed-out and cancelled calls with is_error and carries images and contexts', async () => {
    const { root } = await rootWith(adapterTools(), { approval: { request: async () => 'rejected' } })
    const { server, client } = await serve([
      anthropicReply(null, [
        { id: 'toolu_deny', name: 'delete_everything', arguments: '{"confirm":true}' },
        { id: 'toolu_fail', name: 'explode', arguments: '{}' },
        { id: 'toolu_slow', name: 'stall', arguments: '{}' },
        { id: 'toolu_shot', name: 'snapshot', arguments: '{"label":"s"}' },
        { id: 'toolu_note', name: 'remember', arguments: '{"note":"n3"}' },
      ]),
      anthropicReply(null, [{ id: 'toolu_cancel', name: 'stall', arguments: '{}' }]),
      anthropicReply('Done.'),
    ])
    const turn = await beginTurn(root)
    const tools = toAnthropicTools(turn.capabilities)
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Go.' }]
    const first = await client.messages.create({ model: 'scripted', max_tokens: 100, messages, tools })
    const results = toAnthropicToolResults(await turn.tools.executeBatch(fromAnthropicContent(first.content)))
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: results })
    const second = await client.messages.create({ model: 'scripted', max_tokens: 100, messages, tools })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 10)
    const cancelled = toAnthropicToolResults(await turn.tools.executeBatch(fromAnthropicContent(second.content), { signal: controller.signal }))
    messages.push({ role: 'assistant', content: second.content }, { role: 'user', content: cancelled })
    await client.messages.create({ model: 'scripted', max_tokens: 100, messages, tools })

    expect(results).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_deny', is_error: true, content: [{ type: 'text', text: expect.stringContaining('The user rejected the call') }] },
      { type: 'tool_result', tool_use_id: 'toolu_fail', is_error: true, content: [{ type: 'text', text: 'The tool "explode" failed: the disk is on fire' }] },
      { type: 'tool_result', tool_use_id: 'toolu_slow', is_error: true, content: [{ type: 'text', text: expect.stringContaining('did not finish within 40 ms') }] },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_shot',
        content: [
          { type: 'text', text: 'Screenshot "s"' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL_PNG } },
        ],
      },
      { type: 'tool_result', tool_use_id: 'toolu_note', content: [{ type: 'text', text: 'stored' }] },
      { type: 'text', text: expect.stringContaining('Note stored: n3') },
    ])
    expect(cancelled).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_cancel', is_error: true, content: [{ type: 'text', text: 'The call to "stall" was cancelled.' }] }])
    expect(server.refusals).toEqual([])
  })
})

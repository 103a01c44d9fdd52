import { generateText, type LanguageModel, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { beginTurn, expectPaired, rootWith } from '../../test/kit.js'
import { aiSdkTools, type ToolOutcomeError } from '../ai-sdk.js'
import { adapterTools, PIXEL_PNG } from './fixtures/tools.js'

type Generated = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>
type Prompt = Parameters<MockLanguageModelV3['doGenerate']>[0]['prompt']

const usage: Generated['usage'] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
}

function calls(...list: [id: string, name: string, input: string][]): Generated {
  return {
    content: list.map(([toolCallId, toolName, input]) => ({ type: 'tool-call', toolCallId, toolName, input })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  }
}

function answer(text: string): Generated {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
}

/** A mock model that plays `replies` in order and keeps every prompt it was sent. */
function scripted(replies: Generated[]) {
  const prompts: Prompt[] = []
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt)
      const reply = replies.shift()
      if (!reply) throw new Error('no scripted reply left')
      return reply
    },
  })
  return { model: model as LanguageModel, prompts }
}

describe('seam-runtime/ai-sdk with generateText and a mock language model', () => {
  it('runs a step’s parallel calls as one batch, committed in model order', async () => {
    const started: string[] = []
    const { root, journal } = await rootWith(adapterTools(started))
    const turn = await beginTurn(root)
    const { model, prompts } = scripted([
      calls(['c1', 'lookup', '{"id":"A","delayMs":50}'], ['c2', 'lookup', '{"id":"B"}']),
      answer('Both open.'),
    ])
    const result = await generateText({ model, tools: aiSdkTools(turn), prompt: 'A and B?', stopWhen: stepCountIs(4) })

    expect(result.text).toBe('Both open.')
    expect(started.sort()).toEqual(['c1', 'c2'])
    const results = (await journal.read(turn.turnId)).filter((e) => e.kind === 'tool/result').map((e) => e.callId)
    expect(results).toEqual(['c1', 'c2'])
    const toolMessage = prompts[1]!.find((message) => message.role === 'tool')!
    expect(toolMessage.content).toEqual([
      expect.objectContaining({ type: 'tool-result', toolCallId: 'c1', output: { type: 'content', value: [{ type: 'text', text: '{"id":"A","title":"Ticket A"}' }] } }),
      expect.objectContaining({ type: 'tool-result', toolCallId: 'c2', output: { type: 'content', value: [{ type: 'text', text: '{"id":"B","title":"Ticket B"}' }] } }),
    ])
    expect(result.steps[0]!.toolResults.map((part) => (part.output as { status: string }).status)).toEqual(['completed', 'completed'])
    await expectPaired(journal, turn.turnId)
  })

  it('turns denied, failed and timed-out calls into tool-error parts and carries images and contexts', async () => {
    const { root } = await rootWith(adapterTools(), { approval: { request: async () => 'rejected' } })
    const turn = await beginTurn(root)
    const { model, prompts } = scripted([
      calls(
        ['c1', 'delete_everything', '{"confirm":true}'],
        ['c2', 'explode', '{}'],
        ['c3', 'stall', '{}'],
        ['c4', 'snapshot', '{"label":"s"}'],
        ['c5', 'remember', '{"note":"n4"}'],
      ),
      answer('Done.'),
    ])
    const result = await generateText({ model, tools: aiSdkTools(turn), prompt: 'Go.', stopWhen: stepCountIs(4) })

    const errors = result.steps[0]!.content.filter((part) => part.type === 'tool-error')
    expect(errors.map((part) => [part.toolCallId, (part.error as ToolOutcomeError).outcome.code])).toEqual([
      ['c1', 'DENIED'],
      ['c2', 'TOOL_ERROR'],
      ['c3', 'TOOL_TIMEOUT'],
    ])
    const outputs = prompts[1]!.find((message) => message.role === 'tool')!.content.map((part) => (part as { output: unknown }).output)
    expect(outputs).toEqual([
      { type: 'error-text', value: expect.stringContaining('The user rejected the call to "delete_everything"') },
      { type: 'error-text', value: 'The tool "explode" failed: the disk is on fire' },
      { type: 'error-text', value: expect.stringContaining('did not finish within 40 ms') },
      {
        type: 'content',
        value: [
          { type: 'text', text: 'Screenshot "s"' },
          { type: 'image-data', data: PIXEL_PNG, mediaType: 'image/png' },
        ],
      },
      { type: 'content', value: [{ type: 'text', text: 'stored' }, { type: 'text', text: expect.stringContaining('Note stored: n4') }] },
    ])
  })

  it('cancels the calls of a step when the run is aborted', async () => {
    const { root, journal } = await rootWith(adapterTools())
    const turn = await beginTurn(root)
    const { model } = scripted([calls(['c1', 'stall', '{}']), answer('never')])
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 15)
    await expect(generateText({ model, tools: aiSdkTools(turn), prompt: 'Go.', stopWhen: stepCountIs(4), abortSignal: controller.signal })).rejects.toThrow()
    await turn.tools.idle()
    const result = (await journal.read(turn.turnId)).find((e) => e.kind === 'tool/result')
    expect(result).toMatchObject({ callId: 'c1', status: 'cancelled' })
  })
})

import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../features/define-tool.js'
import { beginTurn, rootWith } from '../../test/kit.js'
import { runAgent } from './agent.js'
import type { AgentMessage } from './messages.js'
import type { ModelClient, ModelReply, ModelRequest } from './model-client.js'
import { toChatHistory } from './openai-chat.js'
import { transcript } from './transcript.js'

/** A model that answers from a script and keeps every request it was sent. */
function scripted(replies: ModelReply[]): ModelClient & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = []
  return {
    requests,
    async complete(request) {
      requests.push(request)
      const reply = replies.shift()
      if (!reply) throw new Error('no scripted reply left')
      return reply
    },
  }
}

const NOTES = { description: 'Keep notes of what the user decides.', instructions: '# Notes\nWrite each decision with add_note, one line each.', tools: ['add_note'] }

const addNote = defineTool({
  description: 'Adds a note.',
  input: z.object({ text: z.string() }),
  approval: 'never',
  execute: ({ text }) => ({ saved: text }),
})

const systemText = (request: ModelRequest) => (request.messages[0]?.role === 'system' ? request.messages[0].content : '')

describe('skills by progressive disclosure', () => {
  it('lists a skill in the prompt and lets the model load its instructions with load_skill, journaled and in the transcript', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addTool('add_note', addNote)
      ctx.addSkill('notes', NOTES)
    })
    const turn = await beginTurn(root)
    expect(turn.capabilities.tools.map((t) => t.name)).toEqual(['add_note', 'load_skill'])
    const model = scripted([
      { text: '', toolCalls: [{ callId: 'c1', name: 'load_skill', arguments: '{"name":"notes"}' }] },
      { text: '', toolCalls: [{ callId: 'c2', name: 'add_note', arguments: '{"text":"ship on Friday"}' }] },
      { text: 'Noted.', toolCalls: [] },
    ])
    const run = runAgent({ turn, model, messages: [{ role: 'user', content: 'We ship on Friday.' }] })
    expect(await run.result).toMatchObject({ reason: 'final', text: 'Noted.' })
    await turn.end()

    const system = systemText(model.requests[0]!)
    expect(system).toContain('- notes: Keep notes of what the user decides. (tools: add_note)')
    expect(system).toContain('load its instructions with the load_skill tool')
    // The instructions reach the model only as the result of its load_skill call.
    expect(system).not.toContain('Write each decision')
    expect(model.requests[0]!.tools.map((t) => t.name)).toContain('load_skill')
    const loaded = model.requests[1]!.messages.find((m): m is AgentMessage & { role: 'tool' } => m.role === 'tool')!
    expect(loaded.result).toMatchObject({ callId: 'c1', name: 'load_skill', status: 'completed' })
    expect(loaded.result.content).toEqual([{ type: 'text', text: '# Skill: notes\n\n# Notes\nWrite each decision with add_note, one line each.\n\nTools this skill uses: add_note.' }])

    const events = await journal.read(turn.turnId)
    expect(events.filter((e) => e.kind === 'tool/call').map((e) => (e as { name: string }).name)).toEqual(['load_skill', 'add_note'])
    const history = toChatHistory(await transcript(journal, { turnId: turn.turnId }))
    expect(history).toContainEqual({ role: 'tool', tool_call_id: 'c1', content: expect.stringContaining('Write each decision with add_note') })
  })

  it("runs load_skill through the pipeline's hooks like any call", async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addSkill('notes', NOTES)
      ctx.hooks.preExecute((exec, next) => (exec.name === 'load_skill' ? { kind: 'deny', reason: 'skills are off today' } : next()))
    })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'load_skill', arguments: { name: 'notes' } })
    expect(outcome).toMatchObject({ status: 'denied', reason: 'skills are off today' })
    const unknown = await turn.tools.execute({ callId: 'c2', name: 'load_skill', arguments: { name: 'nope' } })
    expect(unknown).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
    await turn.end()
  })

  it('is not offered when every skill the turn sees is always in the prompt, nor without skills', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addTool('add_note', addNote)
      ctx.addSkill('notes', { ...NOTES, always: true })
    })
    const capabilities = await root.capabilities()
    expect(capabilities.tools.map((t) => t.name)).toEqual(['add_note'])
    const turn = await beginTurn(root)
    const model = scripted([{ text: 'Noted.', toolCalls: [] }])
    await runAgent({ turn, model, messages: [{ role: 'user', content: 'Hi.' }] }).result
    await turn.end()
    const system = systemText(model.requests[0]!)
    expect(system).toContain('## Skill: notes\n\n# Notes\nWrite each decision')
    expect(system).not.toContain('load_skill')

    const { root: bare } = await rootWith((ctx) => {
      ctx.addTool('add_note', addNote)
    })
    expect((await bare.capabilities()).tools.map((t) => t.name)).toEqual(['add_note'])
  })

  it("lets a plugin's own load_skill tool take the name, with a diagnostic, and then the prompt does not point at the built-in", async () => {
    const own = defineTool({ description: 'Loads a skill from the wiki.', input: z.object({ page: z.string() }), approval: 'never', execute: ({ page }) => `wiki ${page}` })
    const { root } = await rootWith((ctx) => {
      ctx.addTool('load_skill', own)
      ctx.addSkill('notes', NOTES)
    })
    const capabilities = await root.capabilities()
    expect(capabilities.tools.map((t) => [t.name, t.source])).toEqual([['load_skill', 'addTool(root)']])
    expect(root.activeGeneration.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'DUPLICATE_CAPABILITY', message: expect.stringContaining('"load_skill" from addTool(root) is offered instead of the built-in tool') }),
    )
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 'load_skill', arguments: { page: 'p' } })).toMatchObject({ status: 'completed', value: 'wiki p' })
    const model = scripted([{ text: 'ok', toolCalls: [] }])
    await runAgent({ turn, model, messages: [{ role: 'user', content: 'Hi.' }] }).result
    await turn.end()
    expect(systemText(model.requests[0]!)).toContain('- notes: Keep notes')
    expect(systemText(model.requests[0]!)).not.toContain('load_skill')
  })
})

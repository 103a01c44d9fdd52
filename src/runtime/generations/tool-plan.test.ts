import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { z } from 'zod'
import { createRoot, defineTool } from '../../index.js'
import { definePlugin } from '../plugins/plugin.js'
import { planOf } from './tool-plan.js'
import { validators } from '../../features/validation.js'

describe('ToolPlan', () => {
  it('calls every method of a definition with the definition as `this`, as a call on it would', async () => {
    const seen: string[] = []
    const tool = defineTool({
      description: 'Says what it is.',
      input: z.object({ text: z.string() }),
      approval: 'on-risk',
      policyTimeoutMs: 5_000,
      risk() {
        seen.push(`risk:${this.description}`)
        return undefined
      },
      idempotencyKey({ text }) {
        seen.push(`key:${this.description}`)
        return text
      },
      execute({ text }) {
        seen.push(`execute:${this.description}`)
        return text.toUpperCase()
      },
      render(_args, value) {
        seen.push(`render:${this.description}`)
        return `${value}!`
      },
      finalizeContent(content) {
        seen.push(`finalize:${this.description}`)
        return content
      },
    })
    const root = await createRoot({ plugin: definePlugin({ name: 'root', setup: (ctx) => void ctx.addTool('shout', tool) }), repair: false })
    onTestFinished(() => root.close())
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u' } })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'shout', arguments: '{"text":"hi"}' })
    expect(outcome).toMatchObject({ status: 'completed', value: 'HI', content: [{ type: 'text', text: 'HI!' }] })
    const d = 'Says what it is.'
    expect(seen).toEqual([`key:${d}`, `risk:${d}`, `execute:${d}`, `render:${d}`, `finalize:${d}`])
  })

  it('is made once per definition: a tool that did not change keeps its plan', () => {
    const tool = defineTool({ description: 'Once.', input: z.object({}), execute: () => 'ok' })
    expect(planOf(tool)).toBe(planOf(tool))
    expect(planOf(tool)).toMatchObject({ definition: tool, execute: tool.execute, input: tool.input, render: undefined })
    expect(planOf(defineTool({ description: 'Once.', input: z.object({}), execute: () => 'ok' }))).not.toBe(planOf(tool))
  })

  it('looks up its input validator on the first call and keeps it: calls after it look nothing up', async () => {
    const tool = defineTool({ description: 'Echo.', input: z.object({ text: z.string() }), approval: 'never', execute: ({ text }) => text })
    const root = await createRoot({ plugin: definePlugin({ name: 'root', setup: (ctx) => void ctx.addTool('echo', tool) }), repair: false })
    onTestFinished(() => root.close())
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u' } })
    const lookups = vi.spyOn(validators, 'forSchema')
    onTestFinished(() => lookups.mockRestore())
    const outcomes = []
    for (const [index, text] of ['a', 'b', 'c'].entries()) outcomes.push(await turn.tools.execute({ callId: `c${index}`, name: 'echo', arguments: JSON.stringify({ text }) }))
    const invalid = await turn.tools.execute({ callId: 'c3', name: 'echo', arguments: '{"text":3}' })
    expect(outcomes.map((o) => o.value)).toEqual(['a', 'b', 'c'])
    expect(invalid).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
    expect(lookups.mock.calls.filter(([schema]) => schema === tool.input)).toHaveLength(1)
  })
})

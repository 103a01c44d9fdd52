import { describe, expect, it } from 'vitest'
import { capabilitySeamToken, type PluginContext, SeamIntegration, type ToolExecutionResult, type ToolSchema } from 'seam-runtime'
import { beginTurn, expectPaired, rootWith } from '../../../test/kit.js'

const IMAGE = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' } as const

/**
 * A root with one provider whose `lookup` answers `result` (declaring `outputSchema` when given);
 * `extra` registers hooks next to it.
 */
async function providerAnswering(
  result: ToolExecutionResult,
  options: { outputSchema?: ToolSchema['outputSchema']; extra?: (ctx: PluginContext) => void } = {},
) {
  const schema: ToolSchema = {
    type: 'function',
    function: { name: 'lookup', description: 'Look up.', parameters: { type: 'object', properties: {} } },
    approval: 'never',
    ...(options.outputSchema ? { outputSchema: options.outputSchema } : {}),
  }
  return rootWith((ctx) => {
    const seams = new SeamIntegration()
    seams.registerToolService('global', { id: 'remote', description: 'A provider with content.', schema: () => [schema], execute: async () => result })
    ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    options.extra?.(ctx)
  })
}

async function callLookup(root: Awaited<ReturnType<typeof rootWith>>['root']) {
  const turn = await beginTurn(root)
  const outcome = await turn.tools.execute({ callId: 'c1', name: 'lookup', arguments: '{}' })
  await turn.end()
  return { outcome, turnId: turn.turnId }
}

describe('provider content: a provider’s own blocks are the outcome’s content', () => {
  it('uses the content blocks as they are, with no value, instead of rendering them as JSON', async () => {
    const { root, journal } = await providerAnswering({ success: true, content: [{ type: 'text', text: 'Echo: hi' }, IMAGE] })
    const { outcome, turnId } = await callLookup(root)
    expect(outcome).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'Echo: hi' }, IMAGE] })
    expect(outcome.value).toBeUndefined()
    expect(Object.isFrozen(outcome.content[1])).toBe(true)
    await expectPaired(journal, turnId)
  })

  it('keeps the structured output as the value next to the content', async () => {
    const { root } = await providerAnswering({ success: true, output: { n: 3 }, content: [{ type: 'text', text: 'three' }] })
    const { outcome } = await callLookup(root)
    expect(outcome).toMatchObject({ status: 'completed', value: { n: 3 }, content: [{ type: 'text', text: 'three' }] })
  })

  it('renders the value as JSON only when the provider gave no content', async () => {
    const { root } = await providerAnswering({ success: true, output: { n: 3 } })
    const { outcome } = await callLookup(root)
    expect(outcome.content).toEqual([{ type: 'text', text: '{"n":3}' }])
  })

  it('validates the value against the provider’s outputSchema', async () => {
    const schema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }
    const { root } = await providerAnswering({ success: true, output: { n: 'three' }, content: [{ type: 'text', text: 'three' }] }, { outputSchema: schema })
    const { outcome } = await callLookup(root)
    expect(outcome).toMatchObject({ status: 'failed', code: 'INVALID_OUTPUT', details: { fields: ['/n'] } })
  })

  it('refuses a block it does not know as INVALID_OUTPUT rather than dropping part of the result', async () => {
    const { root } = await providerAnswering({ success: true, content: [{ type: 'hologram', data: 'x' }] as never })
    const { outcome } = await callLookup(root)
    expect(outcome).toMatchObject({ status: 'failed', code: 'INVALID_OUTPUT' })
    expect((outcome.content[0] as { text: string }).text).toContain('unsupported content block')
  })

  it('copies the blocks, so a provider that changes them later cannot change the outcome', async () => {
    const block = { type: 'text' as const, text: 'before' }
    const { root } = await providerAnswering({ success: true, content: [block] })
    const { outcome } = await callLookup(root)
    block.text = 'after'
    expect(outcome.content).toEqual([{ type: 'text', text: 'before' }])
  })
})

describe('post-execute with provider content', () => {
  it('renders a value a hook replaced instead of the provider content that showed the old one', async () => {
    const { root } = await providerAnswering(
      { success: true, output: { secret: 'x' }, content: [{ type: 'text', text: 'secret: x' }] },
      { extra: (ctx) => ctx.hooks.postExecute(() => ({ kind: 'accept', value: { secret: '***' } })) },
    )
    const { outcome } = await callLookup(root)
    expect(outcome).toMatchObject({ status: 'completed', value: { secret: '***' }, content: [{ type: 'text', text: '{"secret":"***"}' }] })
  })

  it('blocks with content blocks as feedback: the model sees them after the sentence saying why', async () => {
    const feedback = [{ type: 'text' as const, text: 'faces are not shown' }, { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' }]
    const { root } = await providerAnswering(
      { success: true, content: [IMAGE] },
      { extra: (ctx) => ctx.hooks.postExecute(() => ({ kind: 'block', feedback })) },
    )
    const { outcome } = await callLookup(root)
    expect(outcome).toMatchObject({ status: 'failed', code: 'POST_BLOCKED', reason: 'faces are not shown' })
    expect(outcome.content).toEqual([{ type: 'text', text: 'The result of "lookup" was withheld by policy:' }, ...feedback])
  })

  it('blocks (fail closed) when the feedback blocks are malformed', async () => {
    const { root } = await providerAnswering(
      { success: true, content: [IMAGE] },
      { extra: (ctx) => ctx.hooks.postExecute(() => ({ kind: 'block', feedback: [{ type: 'text' }] as never })) },
    )
    const { outcome } = await callLookup(root)
    expect(outcome).toMatchObject({ status: 'failed', code: 'POST_BLOCKED' })
    expect(outcome.reason).toMatch(/invalid feedback: unsupported content block/)
    expect(outcome.content.some((block) => block.type === 'image')).toBe(false)
  })
})

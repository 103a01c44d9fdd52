import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, type QuestionPort, type SampleRequest } from 'seam-runtime'
import { beginTurn, rootWith } from '../../../test/kit.js'

/** A turn whose tool samples and lists roots, each outcome (or error code) reported in its value. */
async function requesting(port: QuestionPort | undefined, options: { unattended?: boolean } = {}) {
  const { root } = await rootWith((ctx) => {
    ctx.addTool('setup', defineTool({
      description: 'Samples, then lists roots.',
      input: z.object({}),
      approval: 'never',
      async execute(_args, ctx) {
        const settle = (work: Promise<unknown>) => work.then((value) => ({ value }), (error: { code?: string }) => ({ code: error.code }))
        const sample = await settle(ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'token sk-live-123 here' } }], maxTokens: 10, timeoutMs: 200 }))
        const roots = await settle(ctx.roots())
        return { sample, roots }
      },
    }))
  })
  const turn = await beginTurn(root, { ports: port ? { question: port } : {}, unattended: options.unattended })
  const outcome = await turn.tools.execute({ callId: 'c1', name: 'setup', arguments: '{}' })
  await turn.end()
  const events = (await root.journal.read(turn.turnId)).filter((e) => e.kind.startsWith('question/'))
  return { value: (outcome as { value?: unknown }).value, events }
}

describe('ctx.sample and ctx.roots', () => {
  it('go to the turn’s port and are journaled as questions with their method and answer', async () => {
    const sampled: SampleRequest[] = []
    const { value, events } = await requesting({
      async sample(request) {
        sampled.push(request)
        return { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm1' }
      },
      async roots() {
        return [{ uri: 'file:///a', name: 'a' }]
      },
    })
    expect(value).toEqual({ sample: { value: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm1' } }, roots: { value: [{ uri: 'file:///a', name: 'a' }] } })
    expect(sampled[0]).toMatchObject({ questionId: 'q1', callId: 'c1', params: { maxTokens: 10 } })
    expect(events.map((e) => [e.kind, e.kind === 'question/asked' ? e.method : e.kind === 'question/answered' ? e.action : undefined])).toEqual([
      ['question/asked', 'sampling/createMessage'],
      ['question/answered', 'accept'],
      ['question/asked', 'roots/list'],
      ['question/answered', 'accept'],
    ])
    expect(events[0]).toMatchObject({ schema: '{"maxTokens":10}' })
  })

  it('reject CLIENT_UNSUPPORTED without a port that has them, or in an unattended turn, journaling why', async () => {
    for (const [port, unattended] of [[undefined, false], [{ elicit: async () => ({ action: 'decline' as const }) }, false], [undefined, true]] as const) {
      const { value, events } = await requesting(port, { unattended })
      expect(value).toEqual({ sample: { code: 'CLIENT_UNSUPPORTED' }, roots: { code: 'CLIENT_UNSUPPORTED' } })
      expect(events.filter((e) => e.kind === 'question/answered').map((e) => e.kind === 'question/answered' && e.reason)).toEqual(['no-port', 'no-port'])
    }
  })

  it('reject CLIENT_REQUEST_FAILED when the client fails or does not answer in time', async () => {
    const { value, events } = await requesting({ sample: () => new Promise(() => {}), roots: async () => Promise.reject(new Error('user said no')) })
    expect(value).toEqual({ sample: { code: 'CLIENT_REQUEST_FAILED' }, roots: { code: 'CLIENT_REQUEST_FAILED' } })
    expect(events.filter((e) => e.kind === 'question/answered').map((e) => e.kind === 'question/answered' && e.reason)).toEqual(['timeout', 'failed'])
  })
})

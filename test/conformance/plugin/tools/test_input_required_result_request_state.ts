import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/**
 * A question whose round's requestState comes back (conformance: input-required-result-request-state).
 * The state is the runtime's (sealed); the answer reaching this body is what proves it was accepted.
 */
export default defineTool({
  description: 'Asks the person to confirm.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const answer = await ctx.ask({ key: 'confirm', message: 'Please confirm', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } })
    return answer.action === 'accept' ? `state-ok: confirmed ${answer.content.ok}` : `not confirmed (${answer.action})`
  },
  render: (_args, text) => text,
})

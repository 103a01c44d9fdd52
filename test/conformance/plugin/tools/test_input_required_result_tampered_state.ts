import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** A question whose round's requestState a client may tamper with (conformance: input-required-result-tampered-state). */
export default defineTool({
  description: 'Asks the person to confirm.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const answer = await ctx.ask({ key: 'confirm', message: 'Please confirm', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } })
    return `answered: ${answer.action}`
  },
  render: (_args, text) => text,
})

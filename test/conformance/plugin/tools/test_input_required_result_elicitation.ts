import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** One question in an input_required round (conformance: input-required-result-basic-elicitation, -result-type). */
export default defineTool({
  description: 'Asks the person for their name.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const answer = await ctx.ask({
      key: 'user_name',
      message: 'What is your name?',
      schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    })
    return answer.action === 'accept' ? `Hello, ${answer.content.name}!` : `No name given (${answer.action})`
  },
  render: (_args, text) => text,
})

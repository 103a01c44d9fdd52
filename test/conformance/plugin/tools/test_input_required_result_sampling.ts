import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** One sampling request in an input_required round (conformance: input-required-result-basic-sampling). */
export default defineTool({
  description: 'Asks the client’s model for the capital of France.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const result = await ctx.sample({
      key: 'capital_question',
      messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
      maxTokens: 100,
    })
    const content = result.content as { type: string; text?: string }
    return `The model said: ${content.type === 'text' ? content.text : `(${content.type})`}`
  },
  render: (_args, text) => text,
})

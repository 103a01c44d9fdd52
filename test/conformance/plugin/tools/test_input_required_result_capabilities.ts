import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/**
 * Asks a question and a sampling request together; a client that declared only sampling gets only
 * the sampling request (the question is declined at once) (conformance: input-required-result-capability-check).
 */
export default defineTool({
  description: 'Asks for a name and the model’s greeting.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const [name, greeting] = await Promise.all([
      ctx.ask({ key: 'user_name', message: 'What is your name?', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }),
      ctx.sample({ key: 'greeting', messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }).catch(() => undefined),
    ])
    return `question: ${name.action}; sampling: ${greeting ? 'answered' : 'not available'}`
  },
  render: (_args, text) => text,
})

import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** A question, a sampling request and a roots request asked together: one round (conformance: input-required-result-multiple-input-requests). */
export default defineTool({
  description: 'Asks for a name, a greeting and the client’s roots, all at once.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const [name, greeting, roots] = await Promise.all([
      ctx.ask({ key: 'user_name', message: 'What is your name?', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }),
      ctx.sample({ key: 'greeting', messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }),
      ctx.roots({ key: 'client_roots' }),
    ])
    const who = name.action === 'accept' ? String(name.content.name) : 'someone'
    return `${who}, the model (${greeting.model}) greets you; the client has ${roots.length} root(s)`
  },
  render: (_args, text) => text,
})

import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Asks the person for a username and an email (conformance: tools-call-elicitation).',
  input: z.object({ message: z.string() }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute({ message }, ctx) {
    const answer = await ctx.ask({
      message,
      schema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    })
    return `User response: ${JSON.stringify(answer)}`
  },
  render: (_args, text) => text,
})

import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Asks with a default for every primitive type (conformance: elicitation-sep1034-defaults).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const answer = await ctx.ask({
      message: 'Please review the defaults',
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string', default: 'John Doe' },
          age: { type: 'integer', default: 30 },
          score: { type: 'number', default: 95.5 },
          status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', default: true },
        },
      },
    })
    return `Elicitation completed: action=${answer.action}, content=${JSON.stringify('content' in answer ? answer.content : {})}`
  },
  render: (_args, text) => text,
})

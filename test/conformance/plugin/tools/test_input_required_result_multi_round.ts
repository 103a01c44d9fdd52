import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** Two questions one after the other: two rounds, each with its own requestState (conformance: input-required-result-multi-round). */
export default defineTool({
  description: 'Asks for a name, then a favourite colour.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const name = await ctx.ask({ key: 'step1', message: 'Step 1: What is your name?', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } })
    const color = await ctx.ask({
      key: 'step2',
      message: 'Step 2: What is your favorite color?',
      schema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
    })
    const of = (answer: typeof name, field: string) => (answer.action === 'accept' ? String(answer.content[field]) : `(${answer.action})`)
    return `${of(name, 'name')} likes ${of(color, 'color')}`
  },
  render: (_args, text) => text,
})

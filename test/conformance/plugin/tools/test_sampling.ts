import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** Asks the client to sample (conformance: tools-call-sampling, 2025-11-25's `sampling/createMessage`). */
export default defineTool({
  description: 'Asks the client’s model to answer a prompt.',
  input: z.object({ prompt: z.string() }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute({ prompt }, ctx) {
    const result = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 })
    return `LLM response: ${textOf(result.content)}`
  },
  render: (_args, text) => text,
})

function textOf(content: unknown): string {
  const blocks = (Array.isArray(content) ? content : [content]) as { type?: string; text?: string }[]
  return blocks.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

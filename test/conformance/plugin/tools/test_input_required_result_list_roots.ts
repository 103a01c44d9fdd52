import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** One roots/list request in an input_required round (conformance: input-required-result-basic-list-roots). */
export default defineTool({
  description: 'Lists the client’s roots.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    const roots = await ctx.roots({ key: 'client_roots' })
    return `The client has ${roots.length} root(s): ${roots.map((root) => root.uri).join(', ')}`
  },
  render: (_args, text) => text,
})

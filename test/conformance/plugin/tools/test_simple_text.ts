import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Returns one text block (conformance: tools-call-simple-text).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute: () => 'This is a simple text response for testing.',
  render: (_args, text) => text,
})

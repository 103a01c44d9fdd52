import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Always fails (conformance: tools-call-error).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute() {
    throw new Error('This tool intentionally returns an error for testing')
  },
})

import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** Sync only (conformance: the tasks scenarios' `greet`). */
export default defineTool({
  description: 'Greets someone by name.',
  input: z.object({ name: z.string() }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute: ({ name }) => `Hello, ${name}!`,
  render: (_args, text) => text,
})

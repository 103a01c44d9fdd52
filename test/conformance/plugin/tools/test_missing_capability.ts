import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/** Needs a client that declared sampling (conformance: server-stateless, SEP-2575's -32021). */
export default defineTool({
  description: 'Runs only for a client that declared the sampling capability.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  clientCapabilities: ['sampling'],
  execute: () => 'the client can sample',
  render: (_args, text) => text,
})

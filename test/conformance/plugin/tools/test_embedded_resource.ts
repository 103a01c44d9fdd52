import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Returns one embedded text resource (conformance: tools-call-embedded-resource).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute: () => 'This is an embedded resource content.',
  render: (_args, text) => [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text } }],
})

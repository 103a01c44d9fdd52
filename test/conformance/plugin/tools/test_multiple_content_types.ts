import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { RED_PIXEL_PNG } from './lib/media.js'

export default defineTool({
  description: 'Returns a text, an image and an embedded resource block (conformance: tools-call-mixed-content).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute: () => ({ test: 'data', value: 123 }),
  render: (_args, value) => [
    { type: 'text', text: 'Multiple content types test:' },
    { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
    { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify(value) } },
  ],
})

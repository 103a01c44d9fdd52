import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { RED_PIXEL_PNG } from './lib/media.js'

export default defineTool({
  description: 'Returns one image block, a 1×1 red PNG (conformance: tools-call-image).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute: () => RED_PIXEL_PNG,
  render: (_args, data) => [{ type: 'image', data, mimeType: 'image/png' }],
})

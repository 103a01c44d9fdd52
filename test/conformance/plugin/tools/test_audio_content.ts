import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { SILENT_WAV } from './lib/media.js'

export default defineTool({
  description: 'Returns one audio block, a short silent WAV (conformance: tools-call-audio).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute: () => SILENT_WAV,
  render: (_args, data) => [{ type: 'audio', data, mimeType: 'audio/wav' }],
})

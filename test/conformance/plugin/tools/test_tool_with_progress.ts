import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { sleep } from './lib/media.js'

export default defineTool({
  description: 'Runs in three steps of 50 ms (conformance: tools-call-with-progress; tools cannot report progress yet).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    await sleep(50, ctx.signal)
    await sleep(50, ctx.signal)
    return 'Progress test completed'
  },
  render: (_args, text) => text,
})

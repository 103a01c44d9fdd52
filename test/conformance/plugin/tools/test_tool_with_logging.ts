import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { sleep } from './lib/media.js'

export default defineTool({
  description: 'Logs three lines while it runs (conformance: tools-call-with-logging).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    ctx.log.info('Tool execution started')
    await sleep(50, ctx.signal)
    ctx.log.info('Tool processing data')
    await sleep(50, ctx.signal)
    ctx.log.info('Tool execution completed')
    return 'Logging test completed'
  },
  render: (_args, text) => text,
})

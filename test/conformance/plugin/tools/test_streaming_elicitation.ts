import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { sleep } from './lib/media.js'

/**
 * Answers on a response stream after a while (conformance: server-stateless, which checks that a
 * 2026-07-28 response stream carries no request of the server's own). Tools cannot elicit yet.
 */
export default defineTool({
  description: 'Waits 50 ms, logging as it goes, and returns.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    ctx.log.info('waiting')
    await sleep(50, ctx.signal)
    return 'streamed'
  },
  render: (_args, text) => text,
})

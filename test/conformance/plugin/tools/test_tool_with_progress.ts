import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { sleep } from './lib/media.js'

export default defineTool({
  description: 'Reports progress 0, 1, 2 and 3 of 3, 120 ms apart (conformance: tools-call-with-progress).',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  async execute(_args, ctx) {
    // Reports are throttled to one per 100 ms a call, so each step waits a little longer than that.
    for (let done = 0; done <= 3; done++) {
      ctx.progress({ done, total: 3, message: `step ${done} of 3` })
      if (done < 3) await sleep(120, ctx.signal)
    }
    return 'Progress test completed'
  },
  render: (_args, text) => text,
})

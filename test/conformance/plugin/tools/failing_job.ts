import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { sleep } from './lib/media.js'

/** Task-only: reports a tool error after a second (conformance: the tasks scenarios' `failing_job`). */
export default defineTool({
  description: 'A job that always fails after a second.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  task: 'required',
  async execute(_args, ctx) {
    await sleep(1000, ctx.signal)
    throw new Error('the job failed, as it always does')
  },
})

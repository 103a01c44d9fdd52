import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { sleep } from './lib/media.js'

/** Task-capable: sleeps `seconds`, then answers (conformance: the tasks scenarios' `slow_compute`). */
export default defineTool({
  description: 'Computes for the given number of seconds, then reports what it computed.',
  input: z.object({ seconds: z.number().min(0).max(600), label: z.string().optional() }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  task: 'optional',
  timeoutMs: 600_000,
  async execute({ seconds, label }, ctx) {
    await sleep(seconds * 1000, ctx.signal)
    return `Computed ${label ?? 'result'} in ${seconds} s`
  },
  render: (_args, text) => text,
})

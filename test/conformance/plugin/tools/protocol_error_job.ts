import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/**
 * Task-capable: answers a value its own output schema refuses, which the runtime cannot make a
 * result of (INVALID_OUTPUT): the task fails (conformance: the tasks scenarios' `protocol_error_job`).
 */
export default defineTool({
  description: 'A job whose output the server cannot deliver.',
  input: z.object({}),
  output: z.object({ count: z.number() }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  task: 'optional',
  execute: () => ({ count: 'not a number' }) as unknown as { count: number },
  render: (_args, value) => String(value.count),
})

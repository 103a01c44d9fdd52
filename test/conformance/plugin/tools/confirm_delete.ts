import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/**
 * Task-capable and always asked about: the task waits (input_required) on the approval question
 * until the client answers it with tasks/update (conformance: the tasks scenarios' `confirm_delete`).
 * Deletes nothing.
 */
export default defineTool({
  description: 'Deletes a file, once the person confirms it (pretends to: nothing is deleted).',
  input: z.object({ filename: z.string() }),
  approval: 'always',
  annotations: { destructiveHint: true },
  task: 'optional',
  execute: ({ filename }) => `Deleted ${filename}`,
  render: (_args, text) => text,
})

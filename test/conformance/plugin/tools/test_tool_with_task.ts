import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/**
 * Asks in input_required rounds, then becomes a task once answered (conformance:
 * tasks-mrtr-composition): the task's result greets the name gathered before it was one.
 */
export default defineTool({
  description: 'Asks the person for their name, then greets them as a task.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  task: 'required',
  taskStarts: 'after-input',
  async execute(_args, ctx) {
    const answer = await ctx.ask({
      key: 'user_name',
      message: 'What is your name?',
      schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    })
    return answer.action === 'accept' ? `Hello, ${answer.content.name}!` : `No name given (${answer.action})`
  },
  render: (_args, text) => text,
})

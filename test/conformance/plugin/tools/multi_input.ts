import { defineTool } from 'seam-runtime'
import { z } from 'zod'

const schema = { type: 'object', properties: { name: { type: 'string' }, confirm: { type: 'boolean' } } } as const

/**
 * Task-capable, and asks two questions at once: the task waits (input_required) with both on
 * tasks/get, and a client may answer them one at a time with tasks/update (conformance:
 * tasks-mrtr-input's partial fulfilment).
 */
export default defineTool({
  description: 'Asks two questions at once, then reports both answers.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  task: 'optional',
  async execute(_args, ctx) {
    const [first, second] = await Promise.all([
      ctx.ask({ key: 'first', message: 'The first answer?', schema }),
      ctx.ask({ key: 'second', message: 'The second answer?', schema }),
    ])
    return `first: ${first.action}; second: ${second.action}`
  },
  render: (_args, text) => text,
})

/**
 * The one tool most benchmarks call: `lookup_ticket`, a zod schema and a body that answers at once.
 * Shared so each benchmark measures the same tool (and its baseline the same schema and body).
 */
import { z } from 'zod'
import { definePlugin, defineTool } from '../src/index.js'

export const NAME = 'lookup_ticket'
export const DESCRIPTION = 'Look up a ticket.'
/** The arguments every call sends, as a model sends them (JSON text). */
export const ARGUMENTS_TEXT = '{"id":"T-1","limit":3}'
export const lookupInput = z.object({ id: z.string(), limit: z.number().int().max(10).optional() })

/** The work every side shares: the tool body itself. */
export async function lookupBody(args: { id: string }): Promise<{ id: string; title: string }> {
  return { id: args.id, title: 'Printer on fire' }
}

/** A plugin with only `lookup_ticket`, which never asks for approval. */
export const lookupPlugin = definePlugin({
  name: 'bench',
  setup(ctx) {
    ctx.addTool(NAME, defineTool({ description: DESCRIPTION, input: lookupInput, approval: 'never', execute: lookupBody }))
  },
})

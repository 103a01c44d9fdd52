import { defineTool } from 'seam-runtime'

/**
 * Parameters mirrored into `Mcp-Param-*` headers (SEP-2243, conformance:
 * http-custom-header-server-validation): a 2026-07-28 call must carry them, matching its arguments.
 */
export default defineTool({
  description: 'Echoes a region and a priority that travel in request headers too.',
  input: {
    type: 'object',
    properties: {
      region: { type: 'string', description: 'Where to look', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', description: 'How urgent', 'x-mcp-header': 'Priority' },
      query: { type: 'string', description: 'Not mirrored' },
    },
    required: ['region'],
  },
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute: (args) => args,
})

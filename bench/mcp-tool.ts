/**
 * The tool both MCP servers of `bench/mcp.ts` serve, in-process and as stdio children
 * (`bench/mcp-stdio-server.ts`): the same zod schema, the same body, the same result shape.
 */
import { McpServer } from '@modelcontextprotocol/server'
import { definePlugin, defineTool } from '../src/index.js'
import { DESCRIPTION, lookupBody, lookupInput as input, NAME } from './lookup-tool.js'

export { NAME }
export const ARGUMENTS = { id: 'T-1', limit: 3 }

/** Ours: a plugin with the tool, run by a root (every call through the whole pipeline). */
export const plugin = definePlugin({
  name: 'bench',
  setup(ctx) {
    ctx.addTool(NAME, defineTool({ description: DESCRIPTION, input, approval: 'never', annotations: { readOnlyHint: true }, execute: lookupBody }))
  },
})

/** The baseline: the SDK's own high-level server, validating the same zod schema. */
export function bareServer(): McpServer {
  const server = new McpServer({ name: 'bare', version: '1.0.0' })
  server.registerTool(NAME, { description: DESCRIPTION, inputSchema: input, annotations: { readOnlyHint: true } }, async (args) => {
    const value = await lookupBody(args)
    return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value }
  })
  return server
}

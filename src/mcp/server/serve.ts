/**
 * Serving the live generation over MCP (`seam mcp` on stdio, `seam dev` on streamable HTTP).
 *
 * - `tools/list` and `prompts/list` show the live generation's tools and skills, projected once per
 *   generation for the configured principal, owner and an `{ kind: 'mcp' }` origin.
 * - Every `tools/call` is one turn on the generation live when it arrives, through the whole
 *   pipeline and the root's journal; the request's abort signal is the turn's signal.
 * - Approval asks through form elicitation when the client supports it; otherwise the turn is
 *   unattended and a call that needs approval is denied with `APPROVAL_UNAVAILABLE`.
 * - A publish that changes the served lists sends `list_changed` to every connected session.
 */
export { type McpHttpServer, serveHttp } from './serve-http.js'
export type { McpHttpOptions } from './http-options.js'
export type { HttpLimits } from './http-limits.js'
export { serveStdio, type McpStdioOptions } from './serve-stdio.js'

export type { McpServeOptions } from './serve-options.js'

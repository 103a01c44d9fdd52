/** What every way of serving the live generation over MCP (stdio, HTTP) is configured with. */
export interface McpServeOptions {
  /** The seam session calls run in (approval grants are per session). Default `'mcp'` on stdio, `mcp:<MCP session id>` over HTTP. */
  session?: string
  /** Who the calls run as. Default `{ subjectId: 'mcp' }`. */
  principal?: { subjectId: string; roles?: string[] }
  /** Whose capabilities are served. Default `'root'`. */
  owner?: string
  /** One line per session event and call (tool name, status, code, duration); never arguments or tokens. */
  log?: (line: string) => void
}

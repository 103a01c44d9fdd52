import type { ApprovalPort } from '../../seams/approval.js'

/** What every way of serving the live generation over MCP (stdio, HTTP) is configured with. */
export interface McpServeOptions {
  /**
   * The seam session every call runs in, shared by every connection (and its session grants kept
   * past them). Default: a session of its own per MCP session, `mcp:<id>`: one per stdio connection,
   * per 2025-era HTTP session and per 2026-07-28 HTTP request, whose grants end with it.
   */
  session?: string
  /** Who the calls run as. Default `{ subjectId: 'mcp' }`. */
  principal?: { subjectId: string; roles?: string[] }
  /** Whose capabilities are served. Default `'root'`. */
  owner?: string
  /** One line per session event and call (tool name, status, code, duration); never arguments or tokens. */
  log?: (line: string) => void
  /**
   * Asked when a call needs approval: alone for a client that cannot ask its user (no form
   * elicitation), and beside the client's question otherwise (the first answer wins). Without it
   * such calls fail closed with `APPROVAL_UNAVAILABLE`.
   */
  approval?: ApprovalPort
  /**
   * The secret (at least 32 bytes) that seals a 2026-07-28 approval round's `requestState`
   * (AES-256-GCM: the client can neither read the parked call's resume token inside nor change
   * it). Give every process serving one endpoint the same one, so a retry may reach any of them;
   * default: a random key for this process.
   */
  requestStateKey?: string | Uint8Array
}

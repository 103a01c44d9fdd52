import { messageOf } from '../../errors.js'
import type { Root } from '../../runtime/root.js'

/**
 * Ends the session grants of an MCP session that has ended (a stdio connection, a 2025 HTTP
 * session, a 2026-07-28 request): an "allow for the session" answer holds for that session alone,
 * never for the clients after it. Read first, so a session that granted nothing costs no write.
 */
export async function endSessionGrants(root: Root, session: string, log: (line: string) => void): Promise<void> {
  try {
    const coordination = root.journal.coordination
    if ((await coordination.grants({ session })).length === 0) return
    const revoked = await coordination.revokeGrants({ session })
    log(`mcp: session ${session.slice(0, 12)} ended: ${revoked} session grant(s) revoked`)
  } catch (error) {
    // A grant left behind names a session id never used again: it matches no later call.
    log(`mcp: could not revoke the grants of an ended session: ${messageOf(error)}`)
  }
}

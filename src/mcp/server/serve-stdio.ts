import type { Readable, Writable } from 'node:stream'
import { serveStdio as serveStdioEras, StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import type { Root } from '../../runtime/root.js'
import { McpBridge } from './serve-bridge.js'
import type { McpServeOptions } from './serve-options.js'

export type McpStdioOptions = McpServeOptions & { stdin?: Readable; stdout?: Writable }

/**
 * Serves the live generation to one MCP client over stdio (default: this process's stdin and
 * stdout, which then carry nothing but protocol messages), in whichever era the client opens with:
 * `initialize` pins the connection to 2025-11-25, a `server/discover` or enveloped request to
 * 2026-07-28 (the SDK's `serveStdio` decides, and routes `subscriptions/listen`). `closed` settles
 * when the client ends the session (stdin EOF) or `close()` ran; `close()` aborts running calls,
 * waits for them to be journaled, and leaves the root open.
 */
export async function serveStdio(root: Root, options: McpStdioOptions = {}): Promise<{ close(): Promise<void>; closed: Promise<void> }> {
  const bridge = new McpBridge(root, options)
  const log = options.log ?? (() => {})
  let ended!: () => void
  const closed = new Promise<void>((resolve) => {
    ended = resolve
  })
  const wire = new StdioServerTransport(options.stdin ?? process.stdin, options.stdout ?? process.stdout)
  // This connection is a session of its own: a session grant given on it ends with it.
  const session = bridge.sessionFor()
  const handle = serveStdioEras(bridge.factory(session), {
    transport: wire,
    onerror: (error) => log(`mcp stdio: ${error.message}`),
  })
  // The connection ends with the wire, not with an instance: the SDK also closes the instance it
  // made for a 2026 probe when the client falls back to 2025. `serveStdio` set `onclose` synchronously.
  const sdkClosed = wire.onclose
  wire.onclose = () => {
    sdkClosed?.()
    log('mcp stdio: the session ended')
    bridge.endSession(session)
    void bridge.close().then(ended)
  }
  log('mcp stdio: serving')
  let closing: Promise<void> | undefined
  return {
    closed,
    close() {
      closing ??= handle
        .close()
        .catch(() => {})
        .then(() => bridge.endSession(session))
        .then(() => bridge.close())
        .then(ended)
      return closing
    },
  }
}

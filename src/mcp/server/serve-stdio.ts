import type { Readable, Writable } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import type { Root } from '../../runtime/root.js'
import type { McpServeOptions } from './serve-options.js'
import { McpBridge } from './serve-bridge.js'

export type McpStdioOptions = McpServeOptions & { stdin?: Readable; stdout?: Writable }

/**
 * Serves the live generation to one MCP client over stdio (default: this process's stdin and
 * stdout, which then carry nothing but protocol messages). `closed` settles when the client ends
 * the session (stdin EOF) or `close()` ran; `close()` aborts running calls, waits for them to be
 * journaled, and leaves the root open.
 */
export async function serveStdio(root: Root, options: McpStdioOptions = {}): Promise<{ close(): Promise<void>; closed: Promise<void> }> {
  const bridge = new McpBridge(root, options)
  const log = options.log ?? (() => {})
  let ended!: () => void
  const closed = new Promise<void>((resolve) => {
    ended = resolve
  })
  const server = bridge.open(bridge.sessionFor(undefined), () => {
    log('mcp stdio: the session ended')
    void bridge.close().then(ended)
  })
  const transport = new StdioServerTransport(options.stdin ?? process.stdin, options.stdout ?? process.stdout)
  try {
    await server.connect(transport)
  } catch (error) {
    await bridge.close()
    throw error
  }
  log('mcp stdio: serving')
  let closing: Promise<void> | undefined
  return {
    closed,
    close() {
      closing ??= bridge.close().then(ended)
      return closing
    },
  }
}

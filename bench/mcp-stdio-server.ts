/**
 * A child of `bench/mcp.ts`: serves the bench tool over this process's stdio until stdin ends.
 * `bare` runs the SDK's `McpServer` hand-wired to its transport (2025-11-25 only); `bare-eras` the
 * same server behind the SDK's `serveStdio` (both eras); `seam` runs ours (a root with the memory
 * journal, served by `serveStdio`, the same code as `seam mcp`, both eras).
 * `node --import tsx bench/mcp-stdio-server.ts bare|bare-eras|seam`
 */
import { serveStdio as serveEras, StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import { createRoot, memoryJournal } from '../src/index.js'
import { serveStdio } from '../src/mcp/server/serve-stdio.js'
import { bareServer, plugin } from './mcp-tool.js'

const which = process.argv[2]
if (which === 'bare') {
  const server = bareServer()
  await server.connect(new StdioServerTransport())
  process.stdin.on('end', () => void server.close())
} else if (which === 'bare-eras') {
  serveEras(() => bareServer())
} else if (which === 'seam') {
  const root = await createRoot({ plugin, journal: memoryJournal() })
  const served = await serveStdio(root)
  await served.closed
  await root.close()
} else {
  process.stderr.write('usage: mcp-stdio-server.ts bare|bare-eras|seam\n')
  process.exitCode = 2
}

/**
 * A child of `bench/mcp.ts`: serves the bench tool over this process's stdio until stdin ends.
 * `bare` runs the SDK's `McpServer`; `seam` runs ours (a root with the memory journal, served by
 * `serveStdio`, the same code as `seam mcp`).
 * `node --import tsx bench/mcp-stdio-server.ts bare|seam`
 */
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import { createRoot, memoryJournal } from '../src/index.js'
import { serveStdio } from '../src/mcp/server/serve-stdio.js'
import { bareServer, plugin } from './mcp-tool.js'

const which = process.argv[2]
if (which === 'bare') {
  const server = bareServer()
  await server.connect(new StdioServerTransport())
  process.stdin.on('end', () => void server.close())
} else if (which === 'seam') {
  const root = await createRoot({ plugin, journal: memoryJournal() })
  const served = await serveStdio(root)
  await served.closed
  await root.close()
} else {
  process.stderr.write('usage: mcp-stdio-server.ts bare|seam\n')
  process.exitCode = 2
}

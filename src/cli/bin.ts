#!/usr/bin/env node
// The `seam` command, as installed in node_modules/.bin: the built CLI on plain Node.
import { main } from './main.js'
import { drained, scrubWrites } from './io.js'

// A reader that went away (`seam journal | head`) ends the output, not with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

// The terminal gets no secret the process knows; `seam mcp`'s stdout is the protocol, whose error
// texts the MCP server redacts itself, and whose tool output is the model's to see.
scrubWrites(process.stderr)
if (process.argv[2] !== 'mcp') scrubWrites(process.stdout)

const code = await main(process.argv.slice(2))
// process.exit() drops what a pipe has not taken yet (past its 64 KiB buffer), so wait for both streams.
await Promise.all([drained(process.stdout), drained(process.stderr)])
process.exit(code)

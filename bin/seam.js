#!/usr/bin/env node
// The `seam` command. tsx compiles the TypeScript sources on load, so no build step is needed.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../src/cli/main.ts')
process.exit(await main(process.argv.slice(2)))

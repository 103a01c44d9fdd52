// `npm start`: `seam dev` on this repository's own plugin, as the README promises from a fresh clone.
// No install script builds dist/ (the published package carries none), so this brings it up to
// date first: a full build when dist/ is missing, an incremental one (seconds) when it is stale.
import { fileURLToPath } from 'node:url'
import { BIN, build } from './build.mjs'

try {
  build()
} catch (error) {
  console.error(error.message)
  process.exit(1)
}
const bin = new URL(`../${BIN}`, import.meta.url)
process.argv = [process.argv[0], fileURLToPath(bin), 'dev', '.', ...process.argv.slice(2)]
await import(bin.href)

// `npm pack` / `npm publish` lifecycle: `prepack` builds dist/ from scratch (the one build of a
// pack) and writes the package.json that ships: without `scripts`, which are this repository's
// development scripts (npm 11 lists a dependency's lifecycle scripts for approval at install);
// `postpack` puts the repository's package.json back. A pack that died in between is undone by
// the next `prepack` (or by `node scripts/pack.mjs postpack`).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { build } from './build.mjs'

const manifest = new URL('../package.json', import.meta.url)
const kept = new URL('../.package.json.packing', import.meta.url)

function restore() {
  if (existsSync(kept)) renameSync(kept, manifest)
}

const phase = process.argv[2]
if (phase === 'prepack') {
  restore()
  build({ clean: true })
  const text = readFileSync(manifest, 'utf8')
  const { scripts: _development, ...shipped } = JSON.parse(text)
  writeFileSync(kept, text)
  writeFileSync(manifest, `${JSON.stringify(shipped, null, 2)}\n`)
} else if (phase === 'postpack') {
  restore()
} else {
  console.error('usage: node scripts/pack.mjs prepack|postpack')
  process.exit(2)
}

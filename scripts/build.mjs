// `npm run build`: dist/ from src/ (tsc -p tsconfig.build.json, then the console page), leaving the
// `seam` bin executable. Incremental by default (seconds when little changed); `--clean` deletes
// dist/ first, so no output of a deleted source survives (`npm pack` builds that way, once).
// Also imported: `npm start` and the test suites' global setup build through `build()`.
import { spawnSync } from 'node:child_process'
import { chmodSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
/** The file package.json's `bin` names: tsc writes it without the executable bit. */
export const BIN = 'dist/cli/bin.js'

/** Builds dist/; throws with the compiler's output when a step fails. */
export function build({ clean = false, quiet = false } = {}) {
  const started = performance.now()
  if (clean) rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true })
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  step([tsc, '-p', 'tsconfig.build.json'], quiet)
  step(['scripts/build-console.mjs'], quiet)
  chmodSync(new URL(`../${BIN}`, import.meta.url), 0o755)
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  if (!quiet) console.error(`seam-runtime build: dist/ ${clean ? 'from scratch' : 'brought up to date'} in ${seconds} s`)
}

function step(args, quiet) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: quiet ? 'pipe' : 'inherit', encoding: 'utf8' })
  if (result.status !== 0) {
    throw new Error(`build step failed: node ${args.join(' ')}\n${result.stdout ?? ''}${result.stderr ?? result.error ?? ''}`)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    build({ clean: process.argv.includes('--clean') })
  } catch (error) {
    console.error(error.message)
    process.exit(1)
  }
}

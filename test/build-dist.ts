import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

/**
 * Vitest global setup: brings dist/ up to date (an incremental `tsc -p tsconfig.build.json`, about
 * two seconds when nothing changed), so the tests that spawn `seam` run the code under test.
 */
export default async function setup(): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const cwd = fileURLToPath(new URL('..', import.meta.url))
  const run = (args: string[]) =>
    promisify(execFile)(process.execPath, args, { cwd }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`npm run build failed:\n${error.stdout ?? ''}${error.stderr ?? String(error)}`)
    })
  await run([tsc, '-p', 'tsconfig.build.json'])
  // The console page (dist/console/web/), which `seam dev` serves.
  await run(['scripts/build-console.mjs'])
}

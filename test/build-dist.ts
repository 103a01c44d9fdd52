import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

/**
 * Vitest global setup: brings dist/ up to date (scripts/build.mjs, an incremental build: about two
 * seconds when nothing changed), so the tests that spawn `seam` run the code under test.
 */
export default async function setup(): Promise<void> {
  const cwd = fileURLToPath(new URL('..', import.meta.url))
  await promisify(execFile)(process.execPath, ['scripts/build.mjs'], { cwd }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`npm run build failed:\n${error.stdout ?? ''}${error.stderr ?? String(error)}`)
  })
}

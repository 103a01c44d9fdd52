import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rename, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

/**
 * The TypeScript majors `seam check` and `seam dev` drive. 5 is this repository's own (a project
 * without TypeScript of its own falls back to it); 7 is installed from the npm registry:
 * `.ci/run` installs it and sets SEAM_TEST_TS7 to the folder holding its node_modules/. Without
 * the variable a CI run fails, and a local run installs it once into a cache folder of its own.
 */
export const MAJORS = [5, 7] as const

export async function typeScript7(): Promise<string> {
  const given = process.env.SEAM_TEST_TS7
  if (given !== undefined && given !== '') {
    const version = versionIn(given)
    if (version?.startsWith('7.') !== true) throw new Error(`SEAM_TEST_TS7=${given} holds no TypeScript 7 (found ${version ?? 'none'})`)
    return given
  }
  if (process.env.CI) throw new Error('SEAM_TEST_TS7 is not set: .ci/run installs TypeScript 7 and sets it; the TypeScript 7 tests cannot run without it')
  const cache = path.join(tmpdir(), 'seam-test-typescript-7')
  if (versionIn(cache)?.startsWith('7.') === true) return cache
  // Installed beside the cache and moved in whole: test files running at once never see half of it.
  await mkdir(path.dirname(cache), { recursive: true })
  const staging = await mkdtemp(`${cache}-`)
  await promisify(execFile)('npm', ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', 'typescript@7'], { timeout: 170_000 })
  await rename(staging, cache).catch(async (error: unknown) => {
    await rm(staging, { recursive: true, force: true })
    if (versionIn(cache)?.startsWith('7.') !== true) throw error
  })
  return cache
}

/** Gives the project at `dir` TypeScript `major` as its own (5: nothing to do, it falls back to this repository's). */
export async function useTypeScript(dir: string, major: (typeof MAJORS)[number]): Promise<void> {
  if (major === 5) return
  const prefix = await typeScript7()
  await mkdir(path.join(dir, 'node_modules'), { recursive: true })
  await symlink(path.join(prefix, 'node_modules', 'typescript'), path.join(dir, 'node_modules', 'typescript'))
}

function versionIn(prefix: string): string | undefined {
  const manifest = path.join(prefix, 'node_modules', 'typescript', 'package.json')
  if (!existsSync(manifest)) return undefined
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version
}

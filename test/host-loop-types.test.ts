import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it, onTestFinished } from 'vitest'

const repo = fileURLToPath(new URL('..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

/**
 * A host project with seam-runtime installed as built (the repository linked in as the package, so
 * its `exports` map and dist/ declarations are what resolves), checked as strictly as a host may.
 */
async function strictHost(): Promise<string> {
  const project = await mkdtemp(path.join(tmpdir(), 'seam-loop-types-'))
  onTestFinished(() => rm(project, { recursive: true, force: true }))
  await mkdir(path.join(project, 'node_modules', '@types'), { recursive: true })
  await symlink(repo, path.join(project, 'node_modules', 'seam-runtime'), 'dir')
  await symlink(path.join(repo, 'node_modules', '@types', 'node'), path.join(project, 'node_modules', '@types', 'node'), 'dir')
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'loop-host', private: true, type: 'module' }))
  await copyFile(path.join(repo, 'test', 'types', 'host-loops.ts'), path.join(project, 'host-loops.ts'))
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2023', 'ESNext.Disposable'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  }
  await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['host-loops.ts'] }))
  return project
}

describe('the adapter types a host writes its loop with', { timeout: 120_000 }, () => {
  it('type-check a Chat Completions, Responses, Anthropic and AI SDK loop under strict and exactOptionalPropertyTypes', async () => {
    const project = await strictHost()
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project }).catch((error: { stdout: string }) => error)
    expect(result.stdout).toBe('')
  })
})

import { spawn } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, onTestFinished } from 'vitest'
import { initProject, put, start, tool, watch } from './cli-kit.js'
import { MAJORS, useTypeScript } from './typescript-versions.js'

const repo = fileURLToPath(new URL('..', import.meta.url))

/**
 * seam-runtime as `npm install` leaves it in a project without TypeScript: its dist/ and
 * package.json, and its dependencies (linked from this repository), but no typescript anywhere
 * Node would look from there.
 */
async function installedWithoutTypeScript(): Promise<string> {
  const project = await mkdtemp(path.join(tmpdir(), 'seam-no-ts-'))
  onTestFinished(() => rm(project, { recursive: true, force: true }))
  const pkg = path.join(project, 'node_modules', 'seam-runtime')
  await mkdir(pkg, { recursive: true })
  await cp(path.join(repo, 'dist'), path.join(pkg, 'dist'), { recursive: true, filter: (source) => !source.endsWith('.map') && !source.endsWith('.tsbuildinfo') })
  await cp(path.join(repo, 'package.json'), path.join(pkg, 'package.json'))
  const manifest = JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; peerDependencies: Record<string, string> }
  // Its peers too (zod; better-sqlite3, which a project on Node 20 installs for the SQLite journal).
  for (const name of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)]) {
    await mkdir(path.dirname(path.join(project, 'node_modules', name)), { recursive: true })
    await symlink(path.join(repo, 'node_modules', name), path.join(project, 'node_modules', name))
  }
  return project
}

// The first check loads TypeScript, @types/node and zod's types: seconds on a busy machine.
describe.each(MAJORS)('seam dev type-checks in the background with TypeScript %i', { timeout: 180_000 }, (major) => {
  it('prints a type error with file:line and frame while the reload goes live, then clears it, and stops cleanly', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-dev-types-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await initProject(dir)
    await useTypeScript(dir, major)
    // At seam dev's own priority: this test's neighbours keep both cores busy, and the checker's
    // default (nice 10) would leave its results to whenever they pause.
    const child = start(['dev', dir, '--no-mcp', '--debounce', '30'], { SEAM_CHECK_NICE: '0' })
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const out = watch(child)
    await out.until(new RegExp(`types {6}checking in the background \\(TypeScript ${major}\\.\\d+\\.\\d+\\)`))
    await out.until(/^types ok \(2 files, [\d.]+ ms\)$/m, 0, 120_000)
    const example = path.join(dir, 'tools', 'example.ts')
    const clean = await readFile(example, 'utf8')
    // Valid JavaScript (zod compares lengths with '1' as with 1), a type error for TypeScript.
    const broken = clean.replace('z.string().min(1)', "z.string().min('1')")
    expect(broken).not.toBe(clean)
    let from = out.text.length
    await writeFile(example, broken)
    await out.until(/^generation 2 live: ~example \([\d.]+ ms\)$/m, from)
    const error = await out.until(/^1 type error in 1 file \(2 files, [\d.]+ ms\)\n(.*)\n((?: {2}.*\n)+)/m, from, 60_000)
    expect(error[1]).toMatch(/^tools\/example\.ts:7:42 TS2345 Argument of type 'string' is not assignable to parameter of type 'number'/)
    expect(error[2]).toContain("> 7 |   input: z.object({ name: z.string().min('1').describe('who to greet') }),")
    // The caret sits under column 42, the '1'.
    expect(error[2]).toMatch(/^ +\| {42}\^$/m)
    from = out.text.length
    await writeFile(example, clean)
    await out.until(/^generation 3 live: ~example/m, from)
    await out.until(/^types ok \(2 files, [\d.]+ ms\)$/m, from, 60_000)
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const stopping = performance.now()
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(performance.now() - stopping).toBeLessThan(5_000)
    expect(out.text).toMatch(/stopped\n$/)
  })

  it('reports no missing file when a tool file is renamed in a folder without a tsconfig.json', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-dev-rename-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await initProject(dir)
    await rm(path.join(dir, 'tsconfig.json'))
    await useTypeScript(dir, major)
    // The reload (and so the new file list) comes well after TypeScript's own watcher sees the rename.
    const child = start(['dev', dir, '--no-mcp', '--debounce', '600'], { SEAM_CHECK_NICE: '0' })
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const out = watch(child)
    await out.until(/^types ok \(2 files, [\d.]+ ms\)$/m, 0, 120_000)
    // A type error to clear afterwards, so the checker's pass after the rename shows.
    const example = path.join(dir, 'tools', 'example.ts')
    const clean = await readFile(example, 'utf8')
    await writeFile(example, clean.replace('execute({ name }) {', 'execute({ name }) {\n    const n: number = name'))
    await out.until(/^1 type error in 1 file.*\n(?:.*\n)* +\| +\^\n/m, 0, 60_000)
    const from = out.text.length
    await writeFile(example, clean)
    await rename(example, path.join(dir, 'tools', 'greet.ts'))
    await out.until(/^generation \d+ live: .*\+greet/m, from)
    await out.until(/^types ok \(2 files, [\d.]+ ms\)$/m, from, 60_000)
    // Give a late pass on the old file list time to show, then check none did.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(out.text.slice(from)).not.toMatch(/TS6053|not found|type error/)
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
  })

})

describe('seam dev without TypeScript', { timeout: 60_000 }, () => {
  it('refuses a SEAM_CHECK_NICE that is not a niceness from 0 to 19, before it loads anything', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-dev-nice-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    for (const nice of ['20', '-1', 'low']) {
      const child = start(['dev', dir, '--no-mcp'], { SEAM_CHECK_NICE: nice })
      const out = watch(child)
      const code = await new Promise<number | null>((resolve) => child.on('exit', (exit) => resolve(exit)))
      expect(code).not.toBe(0)
      expect(out.text).toContain(`SEAM_CHECK_NICE must be a niceness from 0 to 19, got "${nice}"`)
    }
  })

  it('says once that the project has no TypeScript, and reloads as before', async () => {
    const project = await installedWithoutTypeScript()
    await put(project, 'tools/echo.ts', tool('Echo.', 'never', 'return text'))
    const child = spawn(process.execPath, [path.join(project, 'node_modules', 'seam-runtime', 'dist', 'cli', 'bin.js'), 'dev', project, '--no-mcp', '--debounce', '30'], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const out = watch(child)
    await out.until(/watching for changes/)
    expect(out.text).toContain('  types      not checked: no TypeScript in this project (npm install --save-dev typescript)\n')
    const from = out.text.length
    await put(project, 'tools/echo.ts', tool('Echo it back.', 'never', 'return text'))
    await out.until(/^generation 2 live: ~echo/m, from)
    expect(out.text.match(/TypeScript/g)).toHaveLength(1)
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
  })
})

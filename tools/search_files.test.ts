import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ToolContext } from 'seam-runtime'
import { PATH_ESCAPE_REASON } from './lib/confine.js'
import { type WorkspaceFs, workspaceFs } from './lib/fs-seam.js'
import { textOf, workspaceRoot } from './lib/testing.js'

async function project(workspace: string): Promise<void> {
  await mkdir(join(workspace, 'src', 'deep'), { recursive: true })
  await mkdir(join(workspace, 'node_modules', 'dep'), { recursive: true })
  await writeFile(join(workspace, 'src', 'root.ts'), 'export function createRoot() {}\nexport const x = 1\n')
  await writeFile(join(workspace, 'src', 'deep', 'use.ts'), "import { createRoot } from '../root'\ncreateRoot()\n")
  await writeFile(join(workspace, 'src', 'deep', 'use.test.ts'), 'test(createRoot)\n')
  await writeFile(join(workspace, 'README.md'), 'Call CreateRoot() first.\n')
  await writeFile(join(workspace, 'node_modules', 'dep', 'index.js'), 'createRoot\n')
  await writeFile(join(workspace, 'image.bin'), Buffer.from('createRoot\0\0'))
}

describe('search_files', () => {
  it('finds a literal pattern with file, line and text, skipping node_modules and binary files', async () => {
    const { call, workspace } = await workspaceRoot()
    await project(workspace)
    const outcome = await call('search_files', { pattern: 'createRoot' })
    expect(outcome).toMatchObject({ status: 'completed' })
    expect(outcome.value).toEqual({
      matches: [
        { file: 'src/deep/use.test.ts', line: 1, text: 'test(createRoot)' },
        { file: 'src/deep/use.ts', line: 1, text: "import { createRoot } from '../root'" },
        { file: 'src/deep/use.ts', line: 2, text: 'createRoot()' },
        { file: 'src/root.ts', line: 1, text: 'export function createRoot() {}' },
      ],
      filesSearched: 5,
      truncated: false,
    })
    expect(textOf(outcome)).toContain('src/root.ts:1: export function createRoot() {}')
  })

  it('matches a regular expression, case-insensitively on request', async () => {
    const { call, workspace } = await workspaceRoot()
    await project(workspace)
    const value = (await call('search_files', { pattern: '^export (function|const) \\w+', regex: true })).value as { matches: unknown[] }
    expect(value.matches).toHaveLength(2)
    const files = ((await call('search_files', { pattern: 'createroot()', ignoreCase: true })).value as { matches: { file: string }[] }).matches.map((m) => m.file)
    expect(files).toEqual(['README.md', 'src/deep/use.ts', 'src/root.ts'])
    const bad = await call('search_files', { pattern: '(unclosed', regex: true })
    expect(bad).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(textOf(bad)).toContain('the pattern is not a valid regular expression')
  })

  it('stops a catastrophically backtracking regular expression after its budget, and the host keeps serving meanwhile', async () => {
    const { call, workspace } = await workspaceRoot()
    await project(workspace)
    // 40 a's and a b: (a+)+$ and (a|aa)+$ try every split of the a's before giving up (minutes).
    await writeFile(join(workspace, 'src', 'bomb.txt'), `${'a'.repeat(40)}b\n`)
    let ticks = 0
    const ticker = setInterval(() => ticks++, 10)
    try {
      for (const pattern of ['^(a+)+$', '^(a|aa)+$']) {
        const started = performance.now()
        const stopped = await call('search_files', { pattern, regex: true, path: 'src' })
        const took = performance.now() - started
        expect(stopped).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
        expect(textOf(stopped)).toContain('ran for more than 1000 ms on src/bomb.txt and was stopped')
        expect(took).toBeGreaterThan(900)
        expect(took).toBeLessThan(5_000)
      }
    } finally {
      clearInterval(ticker)
    }
    // The event loop kept turning while the worker was stuck: about 100 ticks a second.
    expect(ticks).toBeGreaterThan(50)
    // A search after that gets a fresh worker and works.
    const value = (await call('search_files', { pattern: 'a{40}b', regex: true })).value as { matches: { file: string }[] }
    expect(value.matches.map((m) => m.file)).toEqual(['src/bomb.txt'])
  })

  it('cancels a regular-expression search that is still running when the call is aborted', async () => {
    const { call, abort, workspace } = await workspaceRoot()
    await project(workspace)
    await writeFile(join(workspace, 'src', 'bomb.txt'), `${'a'.repeat(40)}b\n`)
    const started = performance.now()
    const pending = call('search_files', { pattern: '^(a+)+$', regex: true })
    setTimeout(abort, 100)
    expect(await pending).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(performance.now() - started).toBeLessThan(900)
  })

  it('narrows by glob and path, and searches one file when path names a file', async () => {
    const { call, workspace } = await workspaceRoot()
    await project(workspace)
    const files = async (args: Record<string, unknown>) =>
      [...new Set(((await call('search_files', { pattern: 'createRoot', ...args })).value as { matches: { file: string }[] }).matches.map((m) => m.file))]
    expect(await files({ glob: '*.test.ts' })).toEqual(['src/deep/use.test.ts'])
    expect(await files({ glob: 'deep/*.{ts,js}', path: 'src' })).toEqual(['src/deep/use.test.ts', 'src/deep/use.ts'])
    expect(await files({ glob: '**/root.ts' })).toEqual(['src/root.ts'])
    expect(await files({ path: 'src/root.ts' })).toEqual(['src/root.ts'])
  })

  it('stops at maxResults and says so', async () => {
    const { call, workspace } = await workspaceRoot()
    await writeFile(join(workspace, 'many.txt'), 'hit\n'.repeat(50))
    const outcome = await call('search_files', { pattern: 'hit', maxResults: 10 })
    expect(outcome.value).toMatchObject({ truncated: true, stoppedBy: 'maxResults' })
    expect((outcome.value as { matches: unknown[] }).matches).toHaveLength(10)
    expect(textOf(outcome)).toContain('[stopped at maxResults; narrow the search with path or glob]')
  })

  it('stops between files once its signal is aborted', async () => {
    const { workspace, tools } = await workspaceRoot()
    for (let i = 0; i < 20; i++) await writeFile(join(workspace, `f${String(i).padStart(2, '0')}.txt`), 'needle\n')
    // A consumer sees only the seam: wrap the provider to abort the call after the third file read.
    const fs = workspaceFs(workspace)
    const controller = new AbortController()
    let reads = 0
    const counting: WorkspaceFs = {
      root: fs.root,
      confined: fs.confined,
      resolve: (path) => fs.resolve(path),
      display: (real) => fs.display(real),
      stat: (path) => fs.stat(path),
      list: (path) => fs.list(path),
      walk: (path, options) => fs.walk(path, options),
      writeFile: (path, data, options) => fs.writeFile(path, data, options),
      readFile: (path, options) => {
        if (++reads === 3) controller.abort(new DOMException('stop', 'AbortError'))
        return fs.readFile(path, options)
      },
    }
    const ctx = { signal: controller.signal, use: () => counting } as unknown as ToolContext
    const args = { pattern: 'needle', regex: false, ignoreCase: false, path: '.', maxResults: 100 }
    await expect(Promise.resolve(tools.get('search_files')!.execute(args, ctx))).rejects.toMatchObject({ name: 'AbortError' })
    expect(reads).toBe(3)
  })

  it('does not follow a symlink out of the workspace, and denies a path outside it', async () => {
    const { call, workspace, outside } = await workspaceRoot()
    await writeFile(join(outside, 'secret.txt'), 'needle\n')
    await symlink(outside, join(workspace, 'out'))
    await symlink(join(outside, 'secret.txt'), join(workspace, 'secret-link.txt'))
    expect((await call('search_files', { pattern: 'needle' })).value).toMatchObject({ matches: [], filesSearched: 0 })
    for (const path of ['../outside', 'out', 'secret-link.txt']) {
      expect(await call('search_files', { pattern: 'needle', path })).toMatchObject({ status: 'denied', policy: 'guard', reason: PATH_ESCAPE_REASON })
    }
  })

  it('is read-only, never asks, and is concurrency-safe', async () => {
    const { tools } = await workspaceRoot()
    const tool = tools.get('search_files')!
    expect(tool.isConcurrencySafe!({ pattern: 'x' })).toBe(true)
    expect(tool.annotations).toEqual({ readOnlyHint: true })
    expect(tool.approval).toBe('never')
  })
})

import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PATH_ESCAPE_REASON } from './lib/confine.js'
import { textOf, workspaceRoot } from './lib/testing.js'

async function tree(workspace: string): Promise<void> {
  for (const dir of ['src/lib', 'node_modules/zod', '.git']) await mkdir(join(workspace, dir), { recursive: true })
  await writeFile(join(workspace, 'package.json'), '{}\n')
  await writeFile(join(workspace, 'src', 'index.ts'), 'export {}\n')
  await writeFile(join(workspace, 'src', 'lib', 'util.ts'), '')
  await writeFile(join(workspace, 'node_modules', 'zod', 'index.js'), '')
  await writeFile(join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n')
}

describe('list_files', () => {
  it('lists the root with types and sizes, one level by default', async () => {
    const { call, workspace } = await workspaceRoot()
    await tree(workspace)
    const outcome = await call('list_files', {})
    expect(outcome).toMatchObject({ status: 'completed' })
    expect(outcome.value).toEqual({
      path: '.',
      entries: [
        { path: '.git', type: 'dir', size: 0 },
        { path: 'node_modules', type: 'dir', size: 0 },
        { path: 'package.json', type: 'file', size: 3 },
        { path: 'src', type: 'dir', size: 0 },
      ],
      truncated: false,
    })
    expect(textOf(outcome)).toBe('./\n.git/\nnode_modules/\npackage.json  (3 B)\nsrc/')
  })

  it('descends depth levels but not into .git or node_modules unless all is set', async () => {
    const { call, workspace } = await workspaceRoot()
    await tree(workspace)
    const paths = (value: unknown) => (value as { entries: { path: string }[] }).entries.map((e) => e.path)
    expect(paths((await call('list_files', { depth: 3 })).value)).toEqual(['.git', 'node_modules', 'package.json', 'src', 'src/index.ts', 'src/lib', 'src/lib/util.ts'])
    expect(paths((await call('list_files', { path: 'src', depth: 1 })).value)).toEqual(['src/index.ts', 'src/lib'])
    expect(paths((await call('list_files', { depth: 2, all: true })).value)).toContain('node_modules/zod')
  })

  it('shows a symlink as a symlink and does not follow it', async () => {
    const { call, workspace, outside } = await workspaceRoot()
    await writeFile(join(outside, 'secret.txt'), '')
    await symlink(outside, join(workspace, 'out'))
    const outcome = await call('list_files', { depth: 3 })
    expect(outcome.value).toEqual({ path: '.', entries: [{ path: 'out', type: 'symlink', size: expect.any(Number) }], truncated: false })
  })

  it('denies listing outside the root, through ../ or a symlinked folder', async () => {
    const { call, workspace, outside } = await workspaceRoot()
    await symlink(outside, join(workspace, 'out'))
    for (const path of ['..', '../outside', 'out', '/']) {
      expect(await call('list_files', { path })).toMatchObject({ status: 'denied', policy: 'guard', reason: PATH_ESCAPE_REASON })
    }
  })

  it('says when the path is a file', async () => {
    const { call, workspace } = await workspaceRoot()
    await tree(workspace)
    expect(textOf(await call('list_files', { path: 'package.json' }))).toContain('package.json is not a folder; use read_file')
  })

  it('is read-only, never asks, and is concurrency-safe', async () => {
    const { tools } = await workspaceRoot()
    const tool = tools.get('list_files')!
    expect(tool.isConcurrencySafe!({ path: '.', depth: 1, all: false })).toBe(true)
    expect(tool.annotations).toEqual({ readOnlyHint: true })
    expect(tool.approval).toBe('never')
  })
})

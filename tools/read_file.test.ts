import { execFileSync } from 'node:child_process'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PATH_ESCAPE_REASON } from './lib/confine.js'
import { textOf, workspaceRoot } from './lib/testing.js'

describe('read_file', () => {
  it('reads a text file without asking, rendered with line numbers', async () => {
    const { call, workspace, journal, turn } = await workspaceRoot()
    await writeFile(join(workspace, 'hello.ts'), 'const a = 1\r\nconst b = 2\n')
    const outcome = await call('read_file', { path: 'hello.ts' })
    expect(outcome).toMatchObject({
      status: 'completed',
      value: { path: 'hello.ts', content: 'const a = 1\nconst b = 2', startLine: 1, totalLines: 2, truncated: false },
    })
    expect(textOf(outcome)).toBe('hello.ts (2 lines)\n1\tconst a = 1\n2\tconst b = 2')
    expect((await journal.read(turn.turnId)).some((e) => e.kind === 'approval/asked')).toBe(false)
  })

  it('reads a slice with offset and limit and says the file goes on', async () => {
    const { call, workspace } = await workspaceRoot()
    await writeFile(join(workspace, 'long.txt'), Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n'))
    const outcome = await call('read_file', { path: 'long.txt', offset: 9, limit: 2 })
    expect(outcome.value).toEqual({ path: 'long.txt', content: 'line 9\nline 10', startLine: 9, totalLines: 12, truncated: true })
    expect(textOf(outcome)).toBe('long.txt (12 lines)\n 9\tline 9\n10\tline 10\n[showing lines 9-10 of 12; long lines are cut]')
  })

  it('refuses a binary file and a file over 2 MiB with a clear error', async () => {
    const { call, workspace } = await workspaceRoot()
    await writeFile(join(workspace, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))
    await writeFile(join(workspace, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]))
    await writeFile(join(workspace, 'huge.log'), Buffer.alloc(2 * 1024 * 1024 + 1, 'a'))
    const binary = await call('read_file', { path: 'logo.png' })
    expect(binary).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(textOf(binary)).toContain('logo.png is a binary file (or not UTF-8)')
    expect(textOf(await call('read_file', { path: 'latin1.txt' }))).toContain('binary file (or not UTF-8)')
    expect(textOf(await call('read_file', { path: 'huge.log' }))).toContain('huge.log is larger than 2 MiB; use search_files')
  })

  it('names a missing file and a folder in words, not as an errno', async () => {
    const { call, workspace } = await workspaceRoot()
    await mkdir(join(workspace, 'src'))
    expect(textOf(await call('read_file', { path: 'nope.txt' }))).toContain('nope.txt: no such file or folder')
    expect(textOf(await call('read_file', { path: 'src' }))).toContain('src is a directory')
  })

  it('refuses a FIFO instead of blocking on it', async () => {
    const { call, workspace } = await workspaceRoot()
    execFileSync('mkfifo', [join(workspace, 'pipe')])
    const outcome = await call('read_file', { path: 'pipe' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(textOf(outcome)).toContain('pipe is not a regular file')
  })

  it('denies a ../ escape and a symlink escape in the guard', async () => {
    const { call, workspace, outside } = await workspaceRoot()
    await writeFile(join(outside, 'secret.txt'), 'top secret')
    await symlink(join(outside, 'secret.txt'), join(workspace, 'innocent.txt'))
    await symlink(outside, join(workspace, 'shared'))
    for (const path of ['../outside/secret.txt', join(outside, 'secret.txt'), 'innocent.txt', 'shared/secret.txt']) {
      const outcome = await call('read_file', { path })
      expect(outcome).toMatchObject({ status: 'denied', code: 'DENIED', policy: 'guard', reason: PATH_ESCAPE_REASON })
      expect(JSON.stringify(outcome)).not.toContain('top secret')
    }
  })

  it('is read-only, never asks, and is concurrency-safe', async () => {
    const { tools, turn } = await workspaceRoot()
    const tool = tools.get('read_file')!
    expect(tool.isConcurrencySafe!({ path: 'a' })).toBe(true)
    expect(tool.annotations).toEqual({ readOnlyHint: true })
    expect(turn.capabilities.tools.find((t) => t.name === 'read_file')).toMatchObject({ approval: 'never' })
  })
})

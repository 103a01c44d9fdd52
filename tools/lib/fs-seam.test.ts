import { execFileSync } from 'node:child_process'
import { chmod, link, mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SeamError } from 'seam-runtime'
import { describe, expect, it } from 'vitest'
import { PATH_ESCAPE_REASON } from './confine.js'
import { localFs, workspaceFs } from './fs-seam.js'
import { tempFolders } from './testing.js'

async function escaped(promise: Promise<unknown>): Promise<SeamError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(error instanceof SeamError)) throw new Error(`expected PATH_ESCAPE, got ${String(error)}`)
  expect(error.code).toBe('PATH_ESCAPE')
  return error
}

async function setup() {
  const folders = await tempFolders()
  await writeFile(join(folders.outside, 'secret.txt'), 'outside')
  await mkdir(join(folders.workspace, 'src'))
  await writeFile(join(folders.workspace, 'src', 'a.ts'), 'export const a = 1\n')
  return { ...folders, fs: workspaceFs(folders.workspace) }
}

describe('workspaceFs confinement', () => {
  it('lists no more entries than asked for, and stops when its signal aborts', async () => {
    const { fs, workspace } = await setup()
    await mkdir(join(workspace, 'many'))
    for (let i = 0; i < 300; i++) await writeFile(join(workspace, 'many', `f${String(i).padStart(3, '0')}`), '')
    const first = await fs.list('many', { limit: 10 })
    expect(first.map((e) => e.name)).toEqual(Array.from({ length: 10 }, (_, i) => `f00${i}`))
    const controller = new AbortController()
    controller.abort(new Error('stop listing'))
    await expect(fs.list('many', { signal: controller.signal })).rejects.toThrow('stop listing')
  })

  it('refuses to read or write through a folder swapped for a link after the path was checked', async () => {
    const { fs, workspace, outside } = await setup()
    await mkdir(join(outside, 'sub'))
    await writeFile(join(outside, 'sub', 'data.txt'), 'OUTSIDE SECRET')
    await mkdir(join(workspace, 'sub'))
    await writeFile(join(workspace, 'sub', 'data.txt'), 'inside')
    // The swap lands exactly between the check (resolve) and the use, as a racing process would.
    const check = fs.resolve.bind(fs)
    fs.resolve = async (path: string) => {
      const real = await check(path)
      await rename(join(workspace, 'sub'), join(workspace, 'sub.real'))
      await symlink(join(outside, 'sub'), join(workspace, 'sub'))
      return real
    }
    await escaped(fs.readFile('sub/data.txt'))
    await rm(join(workspace, 'sub'))
    await rename(join(workspace, 'sub.real'), join(workspace, 'sub'))
    await escaped(fs.writeFile('sub/pwned.txt', 'x'))
    expect(await readdir(join(outside, 'sub'))).toEqual(['data.txt'])
  })

  it('refuses to list a folder swapped for a link after the path was checked', async () => {
    const { fs, workspace, outside } = await setup()
    await mkdir(join(outside, 'sub'))
    await writeFile(join(outside, 'sub', 'data.txt'), 'OUTSIDE SECRET')
    await mkdir(join(workspace, 'sub'))
    const check = fs.resolve.bind(fs)
    fs.resolve = async (path: string) => {
      const real = await check(path)
      await rename(join(workspace, 'sub'), join(workspace, 'sub.real'))
      await symlink(join(outside, 'sub'), join(workspace, 'sub'))
      return real
    }
    await escaped(fs.list('sub'))
  })

  it('neither reads nor writes a file with other hard links (one linked in from outside)', async () => {
    const { fs, workspace, outside } = await setup()
    await link(join(outside, 'secret.txt'), join(workspace, 'linked.txt'))
    await expect(fs.readFile('linked.txt')).rejects.toMatchObject({ code: 'EMLINK' })
    await expect(fs.writeFile('linked.txt', 'overwritten')).rejects.toMatchObject({ code: 'EMLINK' })
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside')
    expect((await readdir(workspace)).sort()).toEqual(['linked.txt', 'src'])
  })

  it('refuses a file over the limit and a FIFO (opened without blocking, then refused as not a regular file)', async () => {
    const { fs, workspace } = await setup()
    await writeFile(join(workspace, 'big.txt'), 'x'.repeat(5000))
    await expect(fs.readFile('big.txt', { maxBytes: 1000 })).rejects.toMatchObject({ code: 'EFBIG' })
    expect((await fs.readFile('big.txt', { maxBytes: 5000 })).length).toBe(5000)
    execFileSync('mkfifo', [join(workspace, 'pipe')])
    await expect(fs.readFile('pipe')).rejects.toMatchObject({ code: 'EINVAL' })
  })

  it('resolves relative and absolute paths inside the root to real paths', async () => {
    const { fs, workspace } = await setup()
    expect(fs.root).toBe(workspace)
    expect(await fs.resolve('.')).toBe(workspace)
    expect(await fs.resolve('src/a.ts')).toBe(join(workspace, 'src', 'a.ts'))
    expect(await fs.resolve(join(workspace, 'src'))).toBe(join(workspace, 'src'))
    expect(await fs.resolve('src/../src/./a.ts')).toBe(join(workspace, 'src', 'a.ts'))
    expect(await fs.resolve('new/deeper/file.md')).toBe(join(workspace, 'new', 'deeper', 'file.md'))
  })

  it('refuses a ../ escape with the stable reason', async () => {
    const { fs } = await setup()
    const error = await escaped(fs.resolve('../outside/secret.txt'))
    expect(error.message).toBe(PATH_ESCAPE_REASON)
    await escaped(fs.resolve('..'))
    await escaped(fs.resolve('src/../../outside'))
  })

  it('refuses an absolute path outside the root, and the root folder of a sibling with the same prefix', async () => {
    const { fs, outside, base } = await setup()
    await escaped(fs.resolve(join(outside, 'secret.txt')))
    await escaped(fs.resolve('/etc/hostname'))
    await mkdir(join(base, 'workspace-evil'))
    await escaped(fs.resolve(join(base, 'workspace-evil')))
  })

  it('refuses a symlinked file that points outside', async () => {
    const { fs, workspace, outside } = await setup()
    await symlink(join(outside, 'secret.txt'), join(workspace, 'link.txt'))
    await escaped(fs.resolve('link.txt'))
    await escaped(fs.readFile('link.txt'))
  })

  it('refuses a file below a symlinked folder that points outside, existing or new', async () => {
    const { fs, workspace, outside } = await setup()
    await symlink(outside, join(workspace, 'out'))
    await escaped(fs.resolve('out'))
    await escaped(fs.resolve('out/secret.txt'))
    await escaped(fs.writeFile('out/new.txt', 'x'))
    await escaped(fs.writeFile('out/deeper/new.txt', 'x', { createDirs: true }))
    expect(await readdir(outside)).toEqual(['secret.txt'])
  })

  it('refuses a dangling symlink whose target would be created outside', async () => {
    const { fs, workspace, outside } = await setup()
    await symlink(join(outside, 'not-yet.txt'), join(workspace, 'dangling.txt'))
    await symlink('../outside/rel-not-yet.txt', join(workspace, 'dangling-relative.txt'))
    await escaped(fs.writeFile('dangling.txt', 'x'))
    await escaped(fs.writeFile('dangling-relative.txt', 'x'))
    expect(await readdir(outside)).toEqual(['secret.txt'])
  })

  it('follows a symlink that stays inside the root', async () => {
    const { fs, workspace } = await setup()
    await symlink(join(workspace, 'src'), join(workspace, 'alias'))
    expect(await fs.resolve('alias/a.ts')).toBe(join(workspace, 'src', 'a.ts'))
    expect((await fs.readFile('alias/a.ts')).toString()).toBe('export const a = 1\n')
  })

  it('refuses NUL bytes, and reports a symlink loop as an error rather than a path', async () => {
    const { fs, workspace } = await setup()
    await escaped(fs.resolve('a\0b'))
    await symlink(join(workspace, 'loop-b'), join(workspace, 'loop-a'))
    await symlink(join(workspace, 'loop-a'), join(workspace, 'loop-b'))
    await expect(fs.resolve('loop-a')).rejects.toMatchObject({ code: 'ELOOP' })
  })
})

describe('workspaceFs operations', () => {
  it('writes a new file atomically and reports it created; no temp file stays behind', async () => {
    const { fs, workspace } = await setup()
    expect(await fs.writeFile('notes/todo.md', '# Todo\n', { createDirs: true })).toEqual({ path: 'notes/todo.md', bytes: 7, created: true })
    expect(await readFile(join(workspace, 'notes', 'todo.md'), 'utf8')).toBe('# Todo\n')
    expect(await readdir(join(workspace, 'notes'))).toEqual(['todo.md'])
  })

  it('overwrites an existing file keeping its mode, through a symlink inside the root', async () => {
    const { fs, workspace } = await setup()
    const file = join(workspace, 'run.sh')
    await writeFile(file, 'echo 1\n')
    await chmod(file, 0o755)
    await symlink(file, join(workspace, 'run-link.sh'))
    expect(await fs.writeFile('run-link.sh', 'echo 2\n')).toEqual({ path: 'run.sh', bytes: 7, created: false })
    expect(await readFile(file, 'utf8')).toBe('echo 2\n')
    expect((await stat(file)).mode & 0o777).toBe(0o755)
    expect((await readdir(workspace)).sort()).toEqual(['run-link.sh', 'run.sh', 'src'])
  })

  it('does not create missing folders unless asked, and refuses to write over a folder', async () => {
    const { fs } = await setup()
    await expect(fs.writeFile('missing/file.txt', 'x')).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(fs.writeFile('src', 'x')).rejects.toMatchObject({ code: 'EISDIR' })
  })

  it('refuses to read a file over the size limit before reading it', async () => {
    const { fs, workspace } = await setup()
    await writeFile(join(workspace, 'big.bin'), Buffer.alloc(2048))
    await expect(fs.readFile('big.bin', { maxBytes: 1024 })).rejects.toMatchObject({ code: 'EFBIG' })
    expect((await fs.readFile('big.bin', { maxBytes: 4096 })).byteLength).toBe(2048)
  })

  it('lists a folder with types and sizes, reporting symlinks without following them', async () => {
    const { fs, workspace, outside } = await setup()
    await symlink(outside, join(workspace, 'out'))
    const entries = await fs.list('.')
    expect(entries.map((e) => [e.path, e.type])).toEqual([
      ['out', 'symlink'],
      ['src', 'dir'],
    ])
    expect(await fs.stat('src/a.ts')).toMatchObject({ type: 'file', size: 19 })
    expect(await fs.stat('src/none.ts')).toBeUndefined()
  })

  it('walks files in name order, skipping .git and node_modules and never following symlinks', async () => {
    const { fs, workspace, outside } = await setup()
    for (const dir of ['.git', 'node_modules/pkg', 'src/b']) await mkdir(join(workspace, dir), { recursive: true })
    await writeFile(join(workspace, '.git', 'HEAD'), 'ref')
    await writeFile(join(workspace, 'node_modules', 'pkg', 'index.js'), '')
    await writeFile(join(workspace, 'src', 'b', 'c.ts'), '')
    await writeFile(join(workspace, 'README.md'), '')
    await symlink(outside, join(workspace, 'src', 'out'))
    const files: string[] = []
    for await (const entry of fs.walk('.')) files.push(entry.path)
    expect(files).toEqual(['README.md', 'src/a.ts', 'src/b/c.ts'])
  })

  it('fails every call with CLOSED once disposed', async () => {
    const { fs } = await setup()
    fs.dispose()
    await expect(fs.resolve('src/a.ts')).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(fs.readFile('src/a.ts')).rejects.toMatchObject({ code: 'CLOSED' })
  })
})

describe('localFs', () => {
  it('resolves relative paths against its base and reaches outside it (for trusted hosts)', async () => {
    const { workspace, outside } = await setup()
    const fs = localFs(workspace)
    expect(fs.confined).toBe(false)
    expect(await fs.resolve('../outside/secret.txt')).toBe(join(outside, 'secret.txt'))
    expect((await fs.readFile('../outside/secret.txt')).toString()).toBe('outside')
    expect(fs.display(join(outside, 'secret.txt'))).toBe(join(outside, 'secret.txt'))
  })
})

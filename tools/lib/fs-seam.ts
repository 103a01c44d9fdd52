import { randomUUID } from 'node:crypto'
import { constants, realpathSync, type Stats } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readdir, realpath, rename, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join, relative, sep } from 'node:path'
import { createToken, SeamError } from 'seam-runtime'
import { confine, isInside, PATH_ESCAPE_REASON, realPathOf } from './confine.js'

export type EntryType = 'file' | 'dir' | 'symlink' | 'other'

export interface FileInfo {
  readonly type: EntryType
  readonly size: number
  readonly mtimeMs: number
}

export interface DirEntry extends FileInfo {
  readonly name: string
  /** The entry's path as tools show it (relative to the root when inside it). */
  readonly path: string
}

export interface WalkOptions {
  readonly signal?: AbortSignal
  /** Folder names not descended into (default `.git` and `node_modules`). */
  readonly skip?: ReadonlySet<string>
}

export interface WriteResult {
  readonly path: string
  readonly bytes: number
  readonly created: boolean
}

/**
 * The filesystem capability seam (DESIGN §9b). Tools consume it with `ctx.use(fsToken)` and never
 * import a provider; a host picks `localFs()` or `workspaceFs(root)` in its plugin. Every method takes
 * paths as a model wrote them (relative to `root`, or absolute) and resolves them with `resolve`.
 */
export interface WorkspaceFs {
  /** The real folder relative paths resolve against (and, when confined, stay inside). */
  readonly root: string
  readonly confined: boolean
  /** The real absolute path, symlinks followed; a confined provider throws `PATH_ESCAPE` outside `root`. */
  resolve(path: string): Promise<string>
  /** How tools show a resolved path: relative to `root` when inside it (`.` for the root itself). */
  display(real: string): string
  /** The file's info, or `undefined` when nothing exists there. Follows symlinks. */
  stat(path: string): Promise<FileInfo | undefined>
  /** The whole file; refuses one larger than `maxBytes` (before reading it). */
  readFile(path: string, options?: { maxBytes?: number }): Promise<Buffer>
  /** Writes atomically (temp file in the same folder, then rename), keeping an existing file's mode. */
  writeFile(path: string, data: string | Uint8Array, options?: { createDirs?: boolean }): Promise<WriteResult>
  /**
   * The folder's entries, sorted by name; symlinks are reported as such and not followed. `limit`
   * stops after that many entries (a folder may hold millions); `signal` stops the listing.
   */
  list(path: string, options?: { limit?: number; signal?: AbortSignal }): Promise<DirEntry[]>
  /** Regular files below the folder, depth first in name order; symlinks are never followed. */
  walk(path: string, options?: WalkOptions): AsyncIterable<DirEntry>
}

export const fsToken = createToken<WorkspaceFs>('workspace-fs')
/** The real workspace root the providing plugin chose. */
export const workspaceRootToken = createToken<string>('workspace-root')

export const DEFAULT_SKIP: ReadonlySet<string> = new Set(['.git', 'node_modules'])

/** A provider's lifecycle: after `dispose()` every call fails with `CLOSED`. */
export interface DisposableFs extends WorkspaceFs {
  dispose(): void
}

/** Unconfined: any path the process can reach. For trusted hosts only. */
export function localFs(base: string = process.cwd()): DisposableFs {
  return new NodeFs(realpathSync(base), false)
}

/** Confined to `root`: every path, symlinks included, must resolve inside it, else `PATH_ESCAPE`. */
export function workspaceFs(root: string): DisposableFs {
  return new NodeFs(realpathSync(root), true)
}

class NodeFs implements DisposableFs {
  readonly root: string
  readonly confined: boolean
  #disposed = false

  constructor(root: string, confined: boolean) {
    this.root = root
    this.confined = confined
  }

  dispose(): void {
    this.#disposed = true
  }

  resolve(path: string): Promise<string> {
    if (this.#disposed) return Promise.reject(new SeamError('CLOSED', 'the workspace filesystem has been disposed'))
    return this.confined ? confine(this.root, path) : realPathOf(this.root, path)
  }

  display(real: string): string {
    const rel = relative(this.root, real)
    if (rel === '') return '.'
    if (rel === '..' || rel.startsWith(`..${sep}`)) return real
    return rel.split(sep).join('/')
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    const real = await this.resolve(path)
    const stats = await stat(real).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
      throw error
    })
    return stats && infoOf(stats)
  }

  async readFile(path: string, options: { maxBytes?: number } = {}): Promise<Buffer> {
    const real = await this.resolve(path)
    // Opened without following a last-part link, then checked by what was opened (a folder on the way
    // may have been swapped for a link since `resolve`), and read through the handle: its size and
    // kind are the opened file's, and no more than the limit is read whatever it grows to.
    const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    try {
      await this.#assertOpenedInside(handle.fd, path)
      const info = await handle.stat()
      if (info.isDirectory()) throw fsError('EISDIR', `${this.display(real)} is a directory`)
      // A FIFO or a device would block or never end: only regular files are read.
      if (!info.isFile()) throw fsError('EINVAL', `${this.display(real)} is not a regular file`)
      if (this.confined && info.nlink > 1) throw hardLinked(this.display(real), info.nlink)
      const limit = options.maxBytes ?? Number.MAX_SAFE_INTEGER
      if (info.size > limit) throw fsError('EFBIG', `${this.display(real)} is ${info.size} bytes, over the limit of ${limit}`)
      const chunks: Buffer[] = []
      const chunk = Buffer.alloc(Math.min(64 * 1024, info.size + 1))
      let total = 0
      for (;;) {
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
        if (bytesRead === 0) break
        total += bytesRead
        // It grew past the limit while being read.
        if (total > limit) throw fsError('EFBIG', `${this.display(real)} is over the limit of ${limit} bytes`)
        chunks.push(Buffer.from(chunk.subarray(0, bytesRead)))
      }
      return Buffer.concat(chunks, total)
    } finally {
      await handle.close()
    }
  }

  /** On Linux, where `/proc/self/fd` names what a descriptor opened: it must lie inside the root. */
  async #assertOpenedInside(fd: number, shown: string): Promise<void> {
    if (!this.confined || process.platform !== 'linux') return
    const opened = await realpath(`/proc/self/fd/${fd}`).catch(() => undefined)
    if (opened !== undefined && !isInside(this.root, opened)) {
      throw new SeamError('PATH_ESCAPE', PATH_ESCAPE_REASON, { details: { path: shown } })
    }
  }

  async writeFile(path: string, data: string | Uint8Array, options: { createDirs?: boolean } = {}): Promise<WriteResult> {
    const real = await this.resolve(path)
    const folderPath = dirname(real)
    if (options.createDirs) await mkdir(folderPath, { recursive: true })
    const folder = await this.#openFolder(folderPath, path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw fsError('ENOENT', `the folder ${this.display(folderPath)} does not exist`)
      throw error
    })
    try {
      // Every step below names its file through the opened folder, never by path: a folder swapped
      // for a link since `resolve` cannot move the temp file, the rename or its cleanup outside.
      const inside = (name: string) => join(this.#through(folder, folderPath), name)
      const target = inside(basename(real))
      const existing = await lstat(target).catch(() => undefined)
      if (existing?.isDirectory()) throw fsError('EISDIR', `${this.display(real)} is a directory`)
      if (existing && !existing.isFile()) throw fsError('EINVAL', `${this.display(real)} is not a regular file`)
      if (existing && this.confined && existing.nlink > 1) throw hardLinked(this.display(real), existing.nlink)
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
      // Cut the name so the temp name stays within the 255-byte limit a file name has.
      const temp = inside(`.${Buffer.from(basename(real)).subarray(0, 200).toString().replace(/\uFFFD$/, '')}.${randomUUID().slice(0, 8)}.tmp`)
      const handle = await open(temp, 'wx', 0o666)
      try {
        // Set after open, so the umask cannot narrow an existing file's mode.
        if (existing) await handle.chmod(existing.mode & 0o7777)
        await handle.writeFile(bytes)
        await handle.sync()
        await handle.close()
        // rename replaces the name atomically: a reader sees the old file or the new one, never half.
        await rename(temp, target)
      } catch (error) {
        await handle.close().catch(() => {})
        await unlink(temp).catch(() => {})
        throw error
      }
      return { path: this.display(real), bytes: bytes.byteLength, created: existing === undefined }
    } finally {
      await folder.close()
    }
  }

  async list(path: string, options: { limit?: number; signal?: AbortSignal } = {}): Promise<DirEntry[]> {
    const real = await this.resolve(path)
    const folder = await this.#openFolder(real, path)
    try {
      // Listed through the opened folder: one swapped for a link since `resolve` is not followed.
      const base = this.#through(folder, real)
      const names = (await readdir(base)).sort()
      const limit = options.limit ?? Number.POSITIVE_INFINITY
      const entries: DirEntry[] = []
      for (const name of names) {
        if (entries.length >= limit) break
        if (entries.length % 256 === 0) options.signal?.throwIfAborted()
        const stats = await lstat(join(base, name)).catch(() => undefined)
        if (stats) entries.push({ name, path: this.display(join(real, name)), ...infoOf(stats) })
      }
      return entries
    } finally {
      await folder.close()
    }
  }

  /**
   * Opens a folder and checks that what was opened lies inside the root: the folder (or one on the
   * way) may have been swapped for a link since `resolve`. Later steps go through the descriptor.
   */
  async #openFolder(real: string, shown: string): Promise<FileHandle> {
    const handle = await open(real, constants.O_RDONLY | constants.O_DIRECTORY)
    try {
      await this.#assertOpenedInside(handle.fd, shown)
    } catch (error) {
      await handle.close()
      throw error
    }
    return handle
  }

  /** A path that reaches the opened folder itself whatever its name points to now (Linux), else its path. */
  #through(folder: FileHandle, real: string): string {
    return process.platform === 'linux' ? `/proc/self/fd/${folder.fd}` : real
  }

  async *walk(path: string, options: WalkOptions = {}): AsyncIterable<DirEntry> {
    yield* this.#walk(await this.resolve(path), options.skip ?? DEFAULT_SKIP, options.signal)
  }

  async *#walk(folder: string, skip: ReadonlySet<string>, signal: AbortSignal | undefined): AsyncIterable<DirEntry> {
    signal?.throwIfAborted()
    for (const entry of await this.list(folder, { signal }).catch((error: unknown) => {
      if (signal?.aborted) throw error
      return []
    })) {
      if (entry.type === 'file') yield entry
      else if (entry.type === 'dir' && !skip.has(entry.name)) yield* this.#walk(join(folder, entry.name), skip, signal)
    }
  }
}

function infoOf(stats: Stats): FileInfo {
  const type: EntryType = stats.isFile() ? 'file' : stats.isDirectory() ? 'dir' : stats.isSymbolicLink() ? 'symlink' : 'other'
  return { type, size: stats.size, mtimeMs: stats.mtimeMs }
}

/**
 * A file with other hard links may be one outside the root linked in: neither read nor written
 * through (a confined provider).
 */
function hardLinked(shown: string, links: number): NodeJS.ErrnoException {
  return fsError('EMLINK', `${shown} has ${links} hard links; a file linked from elsewhere is neither read nor written`)
}

function fsError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code })
}

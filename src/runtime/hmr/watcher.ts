import { statSync } from 'node:fs'
import { basename, dirname, join, resolve, sep } from 'node:path'
import { type FSWatcher, watch } from 'chokidar'

/** What to call with each batch of changes, and how long to wait for the burst to end. */
export interface WatcherOptions {
  /** Quiet time after the last event before a batch is delivered. Default 20 ms. */
  readonly debounceMs?: number
  /** Receives the absolute paths that changed (added, changed or removed). Never runs concurrently. */
  readonly onBatch: (changed: ReadonlySet<string>) => void | Promise<void>
  /** Receives watcher errors and errors thrown by `onBatch`. Default: `console.error`. */
  readonly onError?: (error: unknown) => void
}

/** Follows a set of files and folders and reports their changes in coalesced batches. */
export interface Watcher {
  /** Replaces the followed files and folders (folders are followed recursively). */
  setPaths(paths: Iterable<string>): void
  /** Resolves once every followed path is being watched. */
  readonly ready: Promise<void>
  /** Stops watching and waits for a running batch. Idempotent. */
  close(): Promise<void>
}

// Editors' swap, backup and probe files (vim `.x.swp`, `x~`, `4913`, emacs `.#x`) and dependencies.
const NOISE = /^\.|~$|\.sw[a-p]$|^4913$|\.tmp$|^node_modules$/
// A steady stream of saves still yields a batch this often.
const MAX_WAIT_FACTOR = 10
// How long a watch being stopped may take to finish its first scan before it is closed anyway.
const STOP_WAIT_MS = 2_000

/**
 * Watches with chokidar, one instance per followed root (a path not inside another followed folder),
 * so readiness is known per path; each watches from the root's parent, so a root replaced by a new
 * folder or file is followed into it. An editor's unlink + add, a rename and a burst of saves arrive
 * within the debounce and become one batch; events during a running batch make one more.
 */
export function createWatcher(options: WatcherOptions): Watcher {
  return new ChokidarWatcher(options)
}

class ChokidarWatcher implements Watcher {
  readonly #debounceMs: number
  readonly #onBatch: WatcherOptions['onBatch']
  readonly #onError: (error: unknown) => void
  readonly #roots = new Map<string, Followed>()
  #pending = new Set<string>()
  #timer: NodeJS.Timeout | undefined
  #firstPendingAt = 0
  #running: Promise<void> | undefined
  #closing: Promise<void> | undefined
  /** Replaced or dropped watches still being stopped. */
  readonly #stopping = new Set<Promise<void>>()

  constructor(options: WatcherOptions) {
    this.#debounceMs = options.debounceMs ?? 20
    this.#onBatch = options.onBatch
    this.#onError = options.onError ?? ((error) => console.error('seam watcher:', error))
  }

  get ready(): Promise<void> {
    return Promise.all([...this.#roots.values()].map((root) => root.ready)).then(() => undefined)
  }

  setPaths(paths: Iterable<string>): void {
    if (this.#closing !== undefined) return
    const roots = rootsOf(paths)
    for (const [path, root] of this.#roots) {
      if (roots.has(path)) continue
      this.#roots.delete(path)
      this.#retire(root)
    }
    for (const path of roots) if (!this.#roots.has(path)) this.#roots.set(path, this.#follow(path))
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#timer)
      this.#timer = undefined
      const roots = [...this.#roots.values()]
      this.#roots.clear()
      await Promise.allSettled([...roots.map((root) => this.#stop(root)), ...this.#stopping])
      await this.#running
    })()
    return this.#closing
  }

  #follow(root: string): Followed {
    // Every path is followed from its parent, or from the nearest existing ancestor of a missing one,
    // pruned to the way there. A folder or file replaced by a new one (`rm -r tools` then `mkdir`, a
    // branch switch, an editor's rename over the file) is a new inode that a watch on the old one
    // never hears of; the parent's watch sees the name come back. chokidar would also report `ready`
    // before it watches for a missing path to appear, and may miss it.
    const anchor = nearestExisting(dirname(root))
    const anchorId = inodeOf(anchor)
    const rootId = inodeOf(root)
    const followed = (path: string) => path === root || path.startsWith(root + sep)
    const onTheWay = (path: string) => root.startsWith(path + sep)
    const watcher = watch(anchor, {
      ignoreInitial: true,
      // Unlink + add is coalesced by the debounce; chokidar's 100 ms atomic wait would only delay deletions.
      atomic: false,
      awaitWriteFinish: false,
      ignored: (path: string) =>
        followed(path) ? path !== root && NOISE.test(basename(path)) : path !== anchor && !onTheWay(path),
    })
    const ready = new Promise<void>((done) => watcher.once('ready', () => done()))
    // The path or its anchor replaced during the first scan (a `mkdir` between the scan's listing and
    // its watch) raises no event: look again once the watch is in place.
    void ready.then(() => this.#refollow(root, watcher))
    const seen = (path: string) => {
      const absolute = resolve(path)
      if (followed(absolute)) {
        if (absolute === root || !NOISE.test(basename(absolute))) this.#record(absolute)
        // The path itself came, went or was replaced: chokidar keeps watching the inode it knew.
        if (absolute === root) this.#refollow(root, watcher)
      }
      // A folder on the way to a missing path appeared (`mkdir -p agent/skills` then a write), or
      // the anchor itself went or was replaced: follow again from the new nearest ancestor.
      else if (onTheWay(absolute) || absolute === anchor) this.#refollow(root, watcher)
    }
    watcher.on('all', (_event, path) => seen(path))
    // chokidar can drop the second of two quick writes (a 5 ms throttle plus an mtime check that may
    // stat between truncate and write); the raw fs.watch events back it up. Reads raise none.
    watcher.on('raw', (_event, name, details) => {
      const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath
      if (typeof watched !== 'string') return
      seen(!name || name === basename(watched) ? watched : join(watched, name))
    })
    watcher.on('error', this.#onError)
    return { watcher, anchor, anchorId, rootId, ready }
  }

  /**
   * Follows `root` with a new watch when an event of its current one says the path or its anchor
   * is no longer what that watch began on (a folder appeared on the way, or one was replaced).
   */
  #refollow(root: string, from: FSWatcher): void {
    const current = this.#roots.get(root)
    if (current?.watcher !== from || this.#closing !== undefined) return
    const anchor = nearestExisting(dirname(root))
    if (anchor === current.anchor && inodeOf(anchor) === current.anchorId && inodeOf(root) === current.rootId) return
    const next = this.#follow(root)
    this.#roots.set(root, next)
    this.#retire(current)
    // Reported once the new watch is in place: what changed before then is read by the reload this
    // starts, what changes after is seen by the watch (reporting at once could miss a write between).
    void next.ready.then(() => {
      if (this.#roots.get(root) === next) this.#record(root)
    })
  }

  /**
   * Closes one chokidar instance once its first scan is done: closed earlier, chokidar 5 can leave a
   * directory's `fs.watch` open for good (it drops the closer of a scan that ends after close), and
   * that handle keeps the process alive.
   */
  async #stop(followed: Followed): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_WAIT_MS)
    })
    await Promise.race([followed.ready, bound])
    clearTimeout(timer)
    await followed.watcher.close()
  }

  /** Stops a watch that was replaced or dropped; `close` waits for it too, so no handle outlives it. */
  #retire(followed: Followed): void {
    const stopping: Promise<void> = this.#stop(followed)
      .catch(this.#onError)
      .finally(() => this.#stopping.delete(stopping))
    this.#stopping.add(stopping)
  }

  #record(path: string): void {
    if (this.#closing !== undefined) return
    if (this.#pending.size === 0) this.#firstPendingAt = Date.now()
    this.#pending.add(path)
    clearTimeout(this.#timer)
    const overdue = Date.now() - this.#firstPendingAt >= this.#debounceMs * MAX_WAIT_FACTOR
    this.#timer = setTimeout(() => this.#flush(), overdue ? 0 : this.#debounceMs)
  }

  #flush(): void {
    this.#timer = undefined
    if (this.#running !== undefined || this.#closing !== undefined || this.#pending.size === 0) return
    const batch: ReadonlySet<string> = this.#pending
    this.#pending = new Set()
    // onBatch starts in a microtask, so `#running` is set before it can settle, even synchronously.
    this.#running = Promise.resolve()
      .then(() => this.#onBatch(batch))
      .catch(this.#onError)
      .finally(() => {
        this.#running = undefined
        // Changes that arrived meanwhile: one more batch, unless their debounce is still running.
        if (this.#pending.size > 0 && this.#timer === undefined) this.#flush()
      })
  }
}

/** One chokidar instance following a root from `anchor`, its parent or nearest existing ancestor. */
interface Followed {
  readonly watcher: FSWatcher
  readonly anchor: string
  /** The anchor's and the root's inodes when the watch began: a new one means a replacement. */
  readonly anchorId: number | undefined
  readonly rootId: number | undefined
  readonly ready: Promise<void>
}

/** Absolute paths, minus any inside another followed path (that folder's watch covers them). */
function rootsOf(paths: Iterable<string>): Set<string> {
  const all = new Set([...paths].map((p) => resolve(p)))
  const roots = new Set<string>()
  for (const path of all) {
    let parent = dirname(path)
    let covered = false
    for (let child = path; parent !== child && !covered; child = parent, parent = dirname(parent)) {
      covered = all.has(parent)
    }
    if (!covered) roots.add(path)
  }
  return roots
}

function nearestExisting(path: string): string {
  let current = path
  while (inodeOf(current) === undefined && dirname(current) !== current) current = dirname(current)
  return current
}

/** The inode at `path`, or `undefined` when nothing is there (or it cannot be looked at). */
function inodeOf(path: string): number | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false })?.ino
  } catch {
    return undefined
  }
}

import { existsSync } from 'node:fs'
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

/**
 * Watches with chokidar, one instance per followed root (a path not inside another followed folder),
 * so readiness is known per path. An editor's unlink + add, a rename and a burst of saves arrive
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
      root.watcher.close().catch(this.#onError)
    }
    for (const path of roots) if (!this.#roots.has(path)) this.#roots.set(path, this.#follow(path))
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#timer)
      this.#timer = undefined
      const roots = [...this.#roots.values()]
      this.#roots.clear()
      await Promise.allSettled(roots.map((root) => root.watcher.close()))
      await this.#running
    })()
    return this.#closing
  }

  #follow(root: string): Followed {
    // chokidar reports `ready` before it watches for a missing path to appear, and may miss it; so a
    // missing path is followed from its nearest existing ancestor, which is pruned to the way there.
    const anchor = nearestExisting(root)
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
    const seen = (path: string) => {
      const absolute = resolve(path)
      if (followed(absolute) && !(absolute !== root && NOISE.test(basename(absolute)))) {
        this.#record(absolute)
        // The followed folder itself was removed (a branch switch, `rm -r tools`): chokidar does not
        // watch a root that comes back, so follow it again from its nearest existing ancestor.
        if (absolute === root && anchor === root && !existsSync(root)) this.#reanchor(root, watcher)
      }
      // A folder on the way to a missing path appeared (`mkdir -p agent/skills` then a write): the
      // files may already be there before a nested watch exists. Report the path itself (a reload
      // lists the folder) and follow it again from its new nearest ancestor.
      else if (anchor !== root && onTheWay(absolute) && existsSync(absolute)) this.#reanchor(root, watcher)
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
    return { watcher, anchor, ready }
  }

  /** Follows `root` from its nearest existing ancestor again, when an event of its current watch moved it. */
  #reanchor(root: string, from: FSWatcher): void {
    const current = this.#roots.get(root)
    if (current?.watcher !== from || this.#closing !== undefined || nearestExisting(root) === current.anchor) return
    const next = this.#follow(root)
    this.#roots.set(root, next)
    current.watcher.close().catch(this.#onError)
    // Reported once the new watch is in place: what changed before then is read by the reload this
    // starts, what changes after is seen by the watch (reporting at once could miss a write between).
    void next.ready.then(() => {
      if (this.#roots.get(root) === next) this.#record(root)
    })
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

/** One chokidar instance following a root from `anchor`, the root or its nearest existing ancestor. */
interface Followed {
  readonly watcher: FSWatcher
  readonly anchor: string
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
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current)
  return current
}

/**
 * The worker threads runs share. A worker is started on demand up to `size`; then a run goes to the
 * worker with the fewest runs. A worker that exits (terminated on a hard limit, out of memory, a
 * crash) fails its runs through `onExit` and is replaced by the next run that needs one.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { transformSync } from 'esbuild'
import { PRELUDE } from './prelude.js'
import type { FromWorker, ToWorker } from './types.js'

export interface PoolWorker {
  readonly worker: Worker
  /** Runs in this worker, by run id. */
  readonly runs: Set<number>
  post(message: ToWorker): void
  /**
   * What the worker is executing, shared with it: [0] ms since `busyBase` when its current slice
   * began (0 when idle), [1] that slice's run id. Read by the sandbox's watchdog.
   */
  readonly busy: Int32Array
  /** Stops the thread now; its runs learn it through the pool's `exit` event, with `reason`. */
  terminate(reason?: string): Promise<number>
}

/** The time `busy[0]` counts from (a worker's slice start is `busyBase + busy[0]` in Date.now() terms). */
export const busyBase = Date.now() - 1

export interface PoolEvents {
  message(worker: PoolWorker, message: FromWorker): void
  exit(worker: PoolWorker, reason: string): void
}

// The V8 heap of a worker (program memory lives in QuickJS's WebAssembly heap, bounded per run).
const WORKER_HEAP_MB = 256

export class WorkerPool {
  readonly #size: number
  readonly #events: PoolEvents
  readonly #workers = new Set<PoolWorker>()

  constructor(size: number, events: PoolEvents) {
    this.#size = size
    this.#events = events
  }

  /** The worker the next run goes to. */
  pick(): PoolWorker {
    let best: PoolWorker | undefined
    for (const worker of this.#workers) if (!best || worker.runs.size < best.runs.size) best = worker
    if (best && (best.runs.size === 0 || this.#workers.size >= this.#size)) return best
    return this.#spawn()
  }

  get size(): number {
    return this.#workers.size
  }

  async close(): Promise<void> {
    const workers = [...this.#workers]
    this.#workers.clear()
    await Promise.allSettled(workers.map((w) => w.terminate()))
  }

  #spawn(): PoolWorker {
    const busy = new Int32Array(new SharedArrayBuffer(8))
    const worker = new Worker(workerEntry(), {
      workerData: { base: import.meta.url, prelude: PRELUDE, busy, busyBase },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      stdout: false,
      stderr: false,
    })
    worker.unref()
    let reason = 'the sandbox worker exited'
    const entry: PoolWorker = {
      worker,
      runs: new Set(),
      busy,
      post: (message) => worker.postMessage(message),
      terminate: (why) => {
        if (why) reason = why
        // No run may be given to a worker on its way out.
        this.#workers.delete(entry)
        return worker.terminate()
      },
    }
    worker.on('message', (message: FromWorker) => this.#events.message(entry, message))
    worker.on('error', (error) => {
      reason = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'out of memory' : `the sandbox worker failed: ${error.message}`
    })
    worker.on('exit', () => {
      this.#workers.delete(entry)
      this.#events.exit(entry, reason)
    })
    this.#workers.add(entry)
    return entry
  }
}

let entry: URL | undefined

/** worker.js beside this file once built; in a source checkout, worker.ts with its types stripped. */
function workerEntry(): URL {
  if (entry) return entry
  const built = new URL('./worker.js', import.meta.url)
  if (existsSync(fileURLToPath(built))) {
    entry = built
    return entry
  }
  const source = readFileSync(new URL('./worker.ts', import.meta.url), 'utf8')
  const { code } = transformSync(source, { loader: 'ts', format: 'esm', target: 'node20' })
  entry = new URL(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)
  return entry
}

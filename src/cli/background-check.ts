import { fork } from 'node:child_process'
import { setPriority } from 'node:os'
import { fileURLToPath } from 'node:url'
import { messageOf } from '../errors.js'
import { formatTypeProblem, ms, printableLines } from './format.js'
import { line, type OutStream, type Style } from './io.js'
import { findTypeScript } from './type-check.js'
import type { CheckWorkerCommand, CheckWorkerInput, CheckWorkerMessage } from './type-check-worker.js'

/** The type-check `seam dev` runs beside its reloads. */
export interface BackgroundCheck {
  /** The banner's `types` line: what is checked, or why nothing is. */
  readonly banner: string
  /** Tool files were added or removed (matters for a folder without a tsconfig.json). */
  sourcesChanged(): void
  /** Stops the worker; idempotent. */
  close(): Promise<void>
}

/**
 * Type-checks `dir` in a child process at the lowest CPU priority, with the project's TypeScript
 * (`seam check`'s setup, in watch mode), so reloads never wait for types and go first on busy
 * cores (a process rather than a worker thread: its garbage collector's threads are lowered too).
 * Prints the errors (file:line:column, code, frame) when they change and `types ok` once they are
 * gone. Without TypeScript it says so in the banner and checks nothing.
 */
export function startBackgroundCheck(dir: string, out: OutStream, style: Style): BackgroundCheck {
  const found = findTypeScript(dir)
  if (found === undefined) {
    return {
      banner: style.dim('not checked: no TypeScript in this project (npm install --save-dev typescript)'),
      sourcesChanged() {},
      close: () => Promise.resolve(),
    }
  }
  const input: CheckWorkerInput = { dir, typescript: found.path }
  const worker = fork(fileURLToPath(new URL('./type-check-worker.js', import.meta.url)), [JSON.stringify(input)], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    execArgv: [],
  })
  try {
    if (worker.pid !== undefined) setPriority(worker.pid, 19)
  } catch {
    // Not allowed here: the check runs at normal priority.
  }
  // The checker never keeps `seam dev` alive; `close` stops it on the way out.
  worker.unref()
  worker.channel?.unref()
  let closed: Promise<void> | undefined
  let stopped = false
  const terminate = () =>
    new Promise<void>((resolve) => {
      if (worker.exitCode !== null || worker.signalCode !== null) return resolve()
      worker.once('exit', () => resolve())
      worker.kill()
    })
  const stop = (why: string) => {
    if (stopped) return
    stopped = true
    line(out, `${style.yellow('warning:')} type-checking stopped: ${printableLines(why)}; reloads go on`)
    void terminate()
  }
  let shown: string | undefined
  worker.on('message', (message: CheckWorkerMessage) => {
    if (message.kind === 'failed') return stop(message.message)
    const key = message.problems.map((p) => `${p.file}:${p.line}:${p.column}:${p.code}:${p.message}`).join('\n')
    if (key === shown) return
    shown = key
    const took = style.dim(`(${message.files} files, ${ms(message.durationMs)})`)
    if (message.problems.length === 0) return line(out, `${style.green('types ok')} ${took}`)
    const files = new Set(message.problems.map((p) => p.file)).size
    const count = `${message.problems.length} type error${message.problems.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}`
    line(out, `${style.red(count)} ${took}`)
    for (const p of message.problems) line(out, formatTypeProblem(p, style, dir))
  })
  worker.on('error', (error) => stop(messageOf(error)))
  worker.on('exit', (code, signal) => stop(`the checker exited (${signal ?? `code ${code}`})`))
  return {
    banner: `checking in the background ${style.dim(`(TypeScript ${found.version})`)}`,
    sourcesChanged() {
      if (!stopped && worker.connected) worker.send({ kind: 'sources-changed' } satisfies CheckWorkerCommand)
    },
    close() {
      stopped = true
      closed ??= terminate()
      return closed
    },
  }
}

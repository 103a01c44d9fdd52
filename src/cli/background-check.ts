import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { messageOf } from '../errors.js'
import { changedSince } from './file-state.js'
import { formatTypeProblem, ms, printableLines } from './format.js'
import { line, type OutStream, type Style } from './io.js'
import { findTypeScript, type TypeScriptInstall, unsupportedTypeScript } from './type-check.js'
import { CHECKER_NICE, type Checker, inBackground, terminate, watchWithTsc } from './type-check-watch.js'
import type { CheckWorkerCommand, CheckWorkerInput, CheckWorkerMessage } from './type-check-worker.js'

/** The type-check `seam dev` runs beside its reloads. */
export interface BackgroundCheck {
  /** The banner's `types` line: what is checked, or why nothing is. */
  readonly banner: string
  /** Tool files were added or removed (matters for a folder without a tsconfig.json). */
  sourcesChanged(): void
  /** Stops the checker; idempotent. */
  close(): Promise<void>
}

/**
 * Type-checks `dir` in a child process at a low CPU priority (`CHECKER_NICE`), with the project's TypeScript
 * in watch mode (5.x: `seam check`'s setup in a worker process; 7.x: its `tsc --watch`), so
 * reloads never wait for types and go first on busy cores. Prints the errors (file:line:column,
 * code, frame) when they change and `types ok` once they are gone. Without a usable TypeScript it
 * says so in the banner and checks nothing.
 */
export function startBackgroundCheck(dir: string, out: OutStream, style: Style, nice = CHECKER_NICE): BackgroundCheck {
  const found = findTypeScript(dir)
  const unusable = found === undefined ? 'no TypeScript in this project (npm install --save-dev typescript)' : unsupportedTypeScript(found)
  if (found === undefined || unusable !== undefined) {
    return { banner: style.dim(`not checked: ${unusable}`), sourcesChanged() {}, close: () => Promise.resolve() }
  }
  let stopped = false
  const report = checkReporter(dir, out, style)
  const stop = (why: string) => {
    if (stopped) return
    stopped = true
    line(out, `${style.yellow('warning:')} type-checking stopped: ${printableLines(why)}; reloads go on`)
    void checker.terminate()
  }
  const onMessage = (message: CheckWorkerMessage) => {
    if (stopped) return
    if (message.kind === 'failed') return stop(message.message)
    report(message).catch((error: unknown) => stop(messageOf(error)))
  }
  let checker: Checker
  try {
    checker = found.major === 7 ? watchWithTsc(found, dir, onMessage, nice) : watchWithWorker(found, dir, onMessage, nice)
  } catch (error) {
    return { banner: style.yellow(`not checked: ${printableLines(messageOf(error))}`), sourcesChanged() {}, close: () => Promise.resolve() }
  }
  let closed: Promise<void> | undefined
  return {
    banner: `checking in the background ${style.dim(`(TypeScript ${found.version})`)}`,
    sourcesChanged() {
      if (!stopped) checker.sourcesChanged()
    },
    close() {
      stopped = true
      closed ??= checker.terminate()
      return closed
    },
  }
}

type Checked = Extract<CheckWorkerMessage, { kind: 'checked' }>

/**
 * Prints each check's result in order, unless it is superseded: a file it read has changed since
 * (the watcher has seen that change too, and a newer pass follows), or it repeats what is shown.
 */
export function checkReporter(dir: string, out: OutStream, style: Style): (message: Checked) => Promise<void> {
  let shown: string | undefined
  let queue = Promise.resolve()
  const show = async (message: Checked) => {
    if ((await changedSince(message.seen)).length > 0) return
    const key = message.problems.map((p) => `${p.file}:${p.line}:${p.column}:${p.code}:${p.message}`).join('\n')
    if (key === shown) return
    shown = key
    const took = style.dim(`(${message.files} files, ${ms(message.durationMs)})`)
    if (message.problems.length === 0) return line(out, `${style.green('types ok')} ${took}`)
    const files = new Set(message.problems.map((p) => p.file)).size
    const count = `${message.problems.length} type error${message.problems.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}`
    line(out, `${style.red(count)} ${took}`)
    for (const p of message.problems) line(out, formatTypeProblem(p, style, dir))
  }
  return (message) => {
    const next = queue.then(() => show(message))
    queue = next.catch(() => {})
    return next
  }
}

/** TypeScript 5's checker: its watch program in a worker process of its own (type-check-worker.ts). */
function watchWithWorker(found: TypeScriptInstall, dir: string, post: (message: CheckWorkerMessage) => void, nice: number): Checker {
  const input: CheckWorkerInput = { dir, typescript: found.path }
  // A process rather than a worker thread: its garbage collector's threads are lowered too.
  const worker = fork(fileURLToPath(new URL('./type-check-worker.js', import.meta.url)), [JSON.stringify(input)], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    execArgv: [],
  })
  inBackground(worker, nice)
  let closing = false
  worker.on('message', (message: CheckWorkerMessage) => post(message))
  worker.on('error', (error) => post({ kind: 'failed', message: messageOf(error) }))
  worker.on('exit', (code, signal) => {
    if (!closing) post({ kind: 'failed', message: `the checker exited (${signal ?? `code ${code}`})` })
  })
  return {
    sourcesChanged() {
      if (worker.connected) worker.send({ kind: 'sources-changed' } satisfies CheckWorkerCommand)
    },
    terminate() {
      closing = true
      return terminate(worker)
    },
  }
}

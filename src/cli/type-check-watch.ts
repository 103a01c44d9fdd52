import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { setPriority, tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { watch } from 'chokidar'
import { messageOf } from '../errors.js'
import { fileStateOf, ownFiles } from './file-state.js'
import { pluginSources, type TypeScriptInstall } from './type-check.js'
import { parseTscOutput, problemsOfTsc, tscExecutable, tscSetup } from './type-check-tsc.js'
import type { CheckWorkerMessage } from './type-check-worker.js'

/** A background checker as `seam dev` drives it, whichever TypeScript runs it. */
export interface Checker {
  /** Tool files were added or removed (matters for a folder without a tsconfig.json). */
  sourcesChanged(): void
  /** Stops it; its exit is then not reported. */
  terminate(): Promise<void>
}

/**
 * A low CPU priority (reloads go first on busy cores) and never keeping `seam dev` alive: it
 * stops the checker on the way out. Nice 10, not 19: on cores kept busy by other work (a build, a
 * test run) nice 19 gets about 1 % of a core per busy process, and a two-second check took minutes;
 * nice 10 still leaves nine tenths of a contended core to the other work.
 */
export const CHECKER_NICE = 10

export function inBackground(child: ChildProcess, nice = CHECKER_NICE): void {
  try {
    if (child.pid !== undefined && nice !== 0) setPriority(child.pid, nice)
  } catch {
    // Not allowed here: the check runs at normal priority.
  }
  child.unref()
  child.channel?.unref()
  for (const stream of [child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.()
}

export function terminate(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill()
  })
}

/**
 * TypeScript 7's checker: a `tsc --incremental` pass (its build info in a folder of its own, so a
 * pass re-checks only what a change can affect) each time a file of the folder changes. Not
 * `tsc --watch`: 7.0's misses changes in some folders. seam takes the state of the project's files
 * before each pass and reports it with the result, so a result a later change made stale is
 * dropped; a change during a pass runs another one after it.
 */
export function watchWithTsc(found: TypeScriptInstall, dir: string, post: (message: CheckWorkerMessage) => void, nice = CHECKER_NICE): Checker {
  const exe = tscExecutable(found)
  const buildInfo = mkdtempSync(path.join(tmpdir(), 'seam-tsc-'))
  let closed = false
  let child: ChildProcess | undefined
  let running = false
  let again = false
  let timer: NodeJS.Timeout | undefined
  // The project's files of the last pass: the next pass takes their state first.
  let known: string[] = []
  const fail = (error: unknown) => {
    if (!closed) post({ kind: 'failed', message: messageOf(error) })
  }

  const pass = async () => {
    const setup = await tscSetup(dir, ['--incremental', '--tsBuildInfoFile', path.join(buildInfo, 'tsbuildinfo.json')])
    const roots = setup.roots
    const started = performance.now()
    const seen = await fileStateOf([...known, ...(roots ?? (await pluginSources(dir)))])
    if (roots?.length === 0) return post({ kind: 'checked', problems: [], files: 0, durationMs: 0, seen })
    const run = await runTsc(exe, setup.args, dir, (c) => (child = c), nice)
    child = undefined
    if (closed) return
    if (run.signal !== null || run.code === null) throw new Error(`tsc exited (${run.signal ?? 'no code'})${run.stderr ? `: ${run.stderr.trim()}` : ''}`)
    // A root file gone since the list was made (renamed, deleted): a list to make again, not the project's error.
    if (roots?.some((file) => seen[file] === null)) {
      again = true
      return
    }
    const output = parseTscOutput(run.stdout.split(/\r?\n/), dir)
    known = ownFiles(dir, output.files)
    const problems = await problemsOfTsc(output, dir)
    if (run.code !== 0 && problems.length === 0) throw new Error(`tsc failed (exit ${run.code}): ${(run.stderr || run.stdout).trim().slice(0, 2000)}`)
    post({ kind: 'checked', problems, files: roots?.length ?? known.length, durationMs: performance.now() - started, seen })
  }

  // One pass at a time; a change during one runs another after it.
  const schedule = () => {
    if (closed) return
    clearTimeout(timer)
    timer = setTimeout(() => {
      if (running) {
        again = true
        return
      }
      running = true
      const loop = async () => {
        do {
          again = false
          await pass()
        } while (again && !closed)
      }
      loop()
        .catch(fail)
        .finally(() => (running = false))
    }, 30)
  }

  const watcher = watch(dir, {
    ignoreInitial: true,
    ignored: (file) => /[\\/](?:node_modules|\.seam|\.git)(?:[\\/]|$)/.test(file),
  })
  watcher.on('all', (_event, file) => {
    if (/\.(?:[cm]?tsx?|json)$/.test(file)) schedule()
  })
  watcher.on('error', fail)
  schedule()
  return {
    sourcesChanged: schedule,
    async terminate() {
      closed = true
      clearTimeout(timer)
      await watcher.close()
      if (child) await terminate(child)
      rmSync(buildInfo, { recursive: true, force: true })
    },
  }
}

/** Runs tsc to its end at low priority, collecting its output. */
function runTsc(exe: string, args: string[], cwd: string, started: (child: ChildProcess) => void, nice = CHECKER_NICE) {
  return new Promise<{ stdout: string; stderr: string; code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    const child = spawn(exe, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    inBackground(child, nice)
    started(child)
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)))
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ stdout, stderr, code, signal }))
  })
}

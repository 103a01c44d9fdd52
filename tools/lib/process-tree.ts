import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { BoundedOutput } from './bounded-output.js'

export interface RunOptions {
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  /** Aborting stops the whole process tree; the run then rejects with the signal's reason. */
  readonly signal: AbortSignal
  /** The command's own limit: past it the tree is stopped and the run resolves with `timedOut`. */
  readonly timeoutMs: number
  /** Bytes kept of each of stdout and stderr. */
  readonly maxOutput: number
  /** Between SIGTERM and SIGKILL. */
  readonly killGraceMs: number
}

export interface RunResult {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly stdoutTruncated: boolean
  readonly stderrTruncated: boolean
  readonly timedOut: boolean
  readonly durationMs: number
}

/**
 * Runs `argv` without a shell as the leader of its own session and process group, so stopping it
 * reaches every process it started: its group, and on Linux every process of its session (a job that
 * moved to a group of its own, `set -m` in a script, stays in the session; only a daemon that starts
 * a new session escapes). When the leader exits, what it left running is stopped too: a command's
 * background work is owned work. A run whose pipes are still held after the kill grace settles anyway.
 */
export function runProcess(argv: readonly string[], options: RunOptions): Promise<RunResult> {
  const { signal } = options
  if (signal.aborted) return Promise.reject(signal.reason)
  const started = performance.now()
  return new Promise<RunResult>((resolve, reject) => {
    const stdout = new BoundedOutput(options.maxOutput)
    const stderr = new BoundedOutput(options.maxOutput)
    let timedOut = false
    let stopping = false
    let killTimer: NodeJS.Timeout | undefined
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      shell: false,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    })
    const pid = child.pid
    const stop = (): void => {
      if (stopping || pid === undefined) return
      stopping = true
      signalTree(pid, 'SIGTERM')
      killTimer = setTimeout(() => {
        signalTree(pid, 'SIGKILL')
        // Something outside the session (a daemon) may still hold the pipes: stop reading them, so
        // the run settles with what it has instead of waiting for them to close.
        killTimer = setTimeout(() => {
          child.stdout.destroy()
          child.stderr.destroy()
        }, options.killGraceMs)
      }, options.killGraceMs)
    }
    const onAbort = (): void => stop()
    const deadline = setTimeout(() => {
      timedOut = true
      stop()
    }, options.timeoutMs)
    signal.addEventListener('abort', onAbort, { once: true })
    const cleanup = (): void => {
      clearTimeout(deadline)
      signal.removeEventListener('abort', onAbort)
    }
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    // The leader is gone; anything left in its group (holding our pipes or not) is stopped now.
    child.once('exit', () => {
      if (pid !== undefined && treeAlive(pid)) {
        stop()
        return
      }
      // Nothing of the tree runs, yet a process outside it (a daemon that started its own session)
      // may hold the pipes open: stop reading after the grace period rather than wait for it.
      killTimer ??= setTimeout(() => {
        child.stdout.destroy()
        child.stderr.destroy()
      }, options.killGraceMs)
    })
    child.once('error', (error: NodeJS.ErrnoException) => {
      cleanup()
      clearTimeout(killTimer)
      reject(error.code === 'ENOENT' ? new Error(`command not found: ${argv[0]}`, { cause: error }) : error)
    })
    child.once('close', async (exitCode, exitSignal) => {
      cleanup()
      // A stopped run settles only once its tree is gone (SIGKILL after the grace period).
      if (pid !== undefined && stopping) {
        await until(() => !treeAlive(pid), options.killGraceMs + 200)
        if (treeAlive(pid)) signalTree(pid, 'SIGKILL')
      }
      clearTimeout(killTimer)
      if (signal.aborted) {
        reject(signal.reason)
        return
      }
      resolve({
        exitCode,
        signal: exitSignal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        timedOut,
        durationMs: Math.round(performance.now() - started),
      })
    })
  })
}

function signalGroup(pgid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pgid, name)
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** Signals the leader's group and, on Linux, every process (and its group) of the leader's session. */
function signalTree(leader: number, name: NodeJS.Signals): void {
  signalGroup(leader, name)
  for (const { pid, pgrp } of sessionMembers(leader)) {
    if (pgrp !== leader) signalGroup(pgrp, name)
    try {
      process.kill(pid, name)
    } catch {
      // Gone meanwhile.
    }
  }
}

/** Whether anything of the leader's group or (on Linux) session still runs; zombies do not count. */
export function treeAlive(leader: number): boolean {
  return groupAlive(leader) || sessionMembers(leader).length > 0
}

/** The live (non-zombie) processes of session `sid`, from `/proc`; none where there is no `/proc`. */
function sessionMembers(sid: number): { pid: number; pgrp: number }[] {
  if (process.platform !== 'linux') return []
  const members: { pid: number; pgrp: number }[] = []
  try {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue
      const fields = procStat(Number(name))
      if (fields !== undefined && Number(fields[3]) === sid && fields[0] !== 'Z') members.push({ pid: Number(name), pgrp: Number(fields[2]) })
    }
  } catch {
    // /proc unreadable: the group signal is all there is.
  }
  return members
}

/**
 * Whether a process of the group is still running. On Linux, zombies do not count: where PID 1 does
 * not reap orphans (some containers), an exited grandchild stays in the group as a zombie forever.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  if (process.platform !== 'linux') return true
  try {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue
      const fields = procStat(Number(name))
      if (fields !== undefined && Number(fields[2]) === pgid && fields[0] !== 'Z') return true
    }
    return false
  } catch {
    return true
  }
}

/** `/proc/<pid>/stat` after the command name: state, ppid, pgrp, …; `undefined` when gone. */
export function procStat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

async function until(done: () => boolean, withinMs: number): Promise<void> {
  const end = Date.now() + withinMs
  while (!done() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
}

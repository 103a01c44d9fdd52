import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { onTestFinished } from 'vitest'

const SCRIPT = fileURLToPath(new URL('./host-process.ts', import.meta.url))

/** One host process on a shared journal (see `fixtures/host-process.ts`), killed when the test ends. */
export interface HostProcess {
  readonly hostId: string
  /** Its process id (to stop and continue it: a host that hangs). */
  readonly pid: number
  /** Sends one request and resolves with its value; rejects with the host's error (its `code` kept). */
  request<T = unknown>(op: string, fields?: Record<string, unknown>): Promise<T>
  /** SIGKILL; resolves once the process has exited. */
  kill(): Promise<void>
  /** Closes its root and exits. */
  close(): Promise<void>
}

export interface HostOptions {
  /** A PostgreSQL URL or a SQLite file. */
  readonly journal: string
  readonly schema?: string
  readonly hostId: string
  readonly leaseMs?: number
  /** The file every body run is appended to. */
  readonly runLog: string
  /** The `note` tool's description (a changed tool). */
  readonly description?: string
  /** The SQLite library of a SQLite journal (default: the journal's own choice). */
  readonly sqliteDriver?: string
  /** Offer `run_code` in its turns. */
  readonly codeMode?: boolean
}

export async function startHost(options: HostOptions): Promise<HostProcess> {
  const env = {
    ...process.env,
    RUN_LOG: options.runLog,
    ...(options.description ? { TOOL_DESCRIPTION: options.description } : {}),
    ...(options.sqliteDriver ? { SQLITE_DRIVER: options.sqliteDriver } : {}),
    ...(options.codeMode ? { CODE_MODE: '1' } : {}),
  }
  const args = ['--import', 'tsx', SCRIPT, options.journal, options.schema ?? '-', options.hostId, String(options.leaseMs ?? 30_000)]
  const proc: ChildProcess = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()))
  onTestFinished(async () => {
    proc.kill('SIGKILL')
    await exited
  })
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  let next = 1
  const ready = new Promise<void>((resolve, reject) => {
    waiting.set(0, { resolve: () => resolve(), reject })
    void exited.then(() => reject(new Error(`host ${options.hostId} exited`)))
  })
  createInterface({ input: proc.stdout! }).on('line', (text) => {
    const message = JSON.parse(text) as { id: number; ok: boolean; value?: unknown; error?: string; code?: string }
    const pending = waiting.get(message.id)
    waiting.delete(message.id)
    if (message.ok) pending?.resolve(message.value)
    else pending?.reject(Object.assign(new Error(message.error), { code: message.code }))
  })
  void exited.then(() => {
    for (const pending of waiting.values()) pending.reject(new Error(`host ${options.hostId} exited`))
    waiting.clear()
  })
  await ready
  const host: HostProcess = {
    hostId: options.hostId,
    pid: proc.pid!,
    request<T>(op: string, fields: Record<string, unknown> = {}) {
      const id = next++
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject })
        proc.stdin!.write(`${JSON.stringify({ ...fields, id, op })}\n`)
      })
    },
    async kill() {
      proc.kill('SIGKILL')
      await exited
    },
    async close() {
      await host.request('close').catch(() => undefined)
      await exited
    },
  }
  return host
}

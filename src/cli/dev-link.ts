import { readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { CliError } from './errors.js'
import { line, type OutStream, styleFor } from './io.js'

/**
 * What `seam dev` writes to `<dir>/.seam/dev.json` while it serves (mode 0600, removed on exit):
 * where its local server is and the per-run token the CLI sends as a bearer header.
 */
export interface DevLinkFile {
  readonly pid: number
  readonly url: string
  readonly token: string
}

/** A running `seam dev` of the folder, reached through its local server. */
export interface DevLink {
  readonly pid: number
  /** The dev server's live generation when it was found. */
  readonly generation: number
  get<T>(route: string): Promise<T>
  post<T>(route: string, body: unknown, signal?: AbortSignal): Promise<T>
}

/** How long a discovery probe waits for the dev server before the command loads the folder itself. */
const PROBE_MS = 2000

/** `<dir>/.seam/dev.json`. */
export function devLinkPath(dir: string): string {
  return path.join(dir, '.seam', 'dev.json')
}

/**
 * The running `seam dev` of `dir`, or `undefined` when there is none: no discovery file, or a
 * stale one (its process is gone, or nothing listens at its URL), which is removed.
 */
export async function findDev(dir: string): Promise<DevLink | undefined> {
  const file = devLinkPath(dir)
  const found = readLink(file)
  if (found === undefined) return undefined
  if (!alive(found.pid)) return forget(file)
  const link = connect(found)
  try {
    const state = await link.get<{ generation: number; pid: number }>('/api/cli/state', AbortSignal.timeout(PROBE_MS))
    // Another process took the port (the dev server died and it was reused): not ours.
    if (state.pid !== found.pid) return forget(file)
    return { ...link, generation: state.generation }
  } catch (error) {
    // Refused: nothing listens there any more. A timeout or another answer: leave the file alone.
    if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') forget(file)
    return undefined
  }
}

/** The one line a command prints (stderr) to say it used the running `seam dev`. */
export function noteVia(out: OutStream, env: NodeJS.ProcessEnv, dev: DevLink, generation = dev.generation): void {
  line(out, styleFor(out, env).dim(`via seam dev (pid ${dev.pid}, generation ${generation})`))
}

/** The one line a command prints (stderr) to say it did the work itself (`what`), by `--local` or for want of a `seam dev`. */
export function noteLocal(out: OutStream, env: NodeJS.ProcessEnv, what: string, forced = false): void {
  line(out, styleFor(out, env).dim(`${forced ? '--local' : 'no seam dev running'}: ${what}`))
}

function readLink(file: string): DevLinkFile | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
  const { pid, url, token } = (parsed ?? {}) as Partial<DevLinkFile>
  if (!Number.isSafeInteger(pid) || typeof url !== 'string' || typeof token !== 'string') return undefined
  return { pid: pid!, url, token }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but is another user's.
    return (error as { code?: string }).code === 'EPERM'
  }
}

function forget(file: string): undefined {
  rmSync(file, { force: true })
  return undefined
}

function connect({ pid, url, token }: DevLinkFile) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  async function request<T>(route: string, init: RequestInit): Promise<T> {
    const response = await fetch(new URL(route, url), { ...init, headers })
    const body = (await response.json()) as T & { error?: string; hint?: string }
    if (!response.ok) throw new CliError(`seam dev (pid ${pid}): ${body.error ?? response.statusText}`, body.hint)
    return body
  }
  return {
    pid,
    get: <T>(route: string, signal?: AbortSignal) => request<T>(route, signal ? { signal } : {}),
    post: <T>(route: string, body: unknown, signal?: AbortSignal) => request<T>(route, { method: 'POST', body: JSON.stringify(body), ...(signal ? { signal } : {}) }),
  }
}

import { readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { type ErrorCode, SeamError } from '../errors.js'
import { CliError, UsageError } from './errors.js'
import { printable } from './format.js'
import { line, type OutStream, styleFor } from './io.js'

/**
 * What `seam dev` writes to `<dir>/.seam/dev.json` while it runs (mode 0600, removed on exit):
 * its process, its CLI server on loopback, and the per-run token the CLI sends as a bearer header.
 */
export interface DevLinkFile {
  readonly pid: number
  readonly url: string
  readonly token: string
}

/** A failed answer of the CLI server, as the CLI rebuilds the error on its side. */
export interface LinkFault {
  readonly error: string
  readonly hint?: string
  /** A usage error (exit 2). */
  readonly usage?: boolean
  /** A `SeamError`'s code and details. */
  readonly code?: ErrorCode
  readonly details?: Record<string, unknown>
}

/** A running `seam dev` of the folder, reached through its CLI server. */
export interface DevLink {
  readonly pid: number
  readonly url: string
  /** The dev server's live generation when it was found. */
  readonly generation: number
  get<T>(route: string, signal?: AbortSignal): Promise<T>
  post<T>(route: string, body: unknown, signal?: AbortSignal): Promise<T>
}

/** Why a command works on the folder itself: `--local`, no `seam dev`, or one that could not be used. */
export interface Local {
  readonly local: string
}

/** How long a discovery probe waits for the dev server before the command loads the folder itself. */
const PROBE_MS = 2000

/** `<dir>/.seam/dev.json`. */
export function devLinkPath(dir: string): string {
  return path.join(dir, '.seam', 'dev.json')
}

/**
 * The running `seam dev` of `dir`, or why there is none to use: `--local`, no discovery file, a
 * stale one (its process is gone, or nothing listens at its URL, or another process does), which
 * is removed, or a server that refuses the file's token or does not answer.
 */
export async function findDev(dir: string, forceLocal = false): Promise<DevLink | Local> {
  if (forceLocal) return { local: '--local' }
  const file = devLinkPath(dir)
  const found = readLink(file)
  if (found === undefined) return { local: 'no seam dev running' }
  if (!alive(found.pid)) return forget(file)
  const link = connect(found)
  try {
    const state = await link.get<{ generation: number; pid: number }>('/api/cli/state', AbortSignal.timeout(PROBE_MS))
    // Another process took the port (the dev server died and it was reused): not ours.
    if (state.pid !== found.pid) return forget(file)
    return { ...link, generation: state.generation }
  } catch (error) {
    // Refused: nothing listens there any more. A timeout or another answer: leave the file alone.
    if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') return forget(file)
    if (error instanceof DOMException && error.name === 'TimeoutError') return { local: `seam dev at ${found.url} did not answer within ${PROBE_MS / 1000} s` }
    return { local: (error as Error).message }
  }
}

export function isLocal(found: DevLink | Local): found is Local {
  return 'local' in found
}

/** The one line (stderr) that says which a command used: `via seam dev at <url>, generation 4 (pid 123)` or `local (why): what`. */
export function noteWhich(out: OutStream, env: NodeJS.ProcessEnv, found: DevLink | Local, what: string): void {
  const text = isLocal(found) ? `local (${found.local}): ${what}` : `via seam dev at ${found.url}, generation ${found.generation} (pid ${found.pid})`
  // The URL and reasons come from a file in the folder: shown with control characters escaped.
  line(out, styleFor(out, env).dim(printable(text)))
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

function forget(file: string): Local {
  rmSync(file, { force: true })
  return { local: 'no seam dev running; removed the stale .seam/dev.json' }
}

function connect({ pid, url, token }: DevLinkFile) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  async function request<T>(route: string, init: RequestInit): Promise<T> {
    const response = await fetch(new URL(route, url), { ...init, headers })
    if (response.ok) return (await response.json()) as T
    const fault = (await response.json().catch(() => ({ error: response.statusText }))) as LinkFault
    if (response.status === 401) throw new CliError(`seam dev at ${url} refused the token in .seam/dev.json`, 'restart `seam dev`, or pass --local')
    if (fault.usage) throw new UsageError(fault.error, fault.hint)
    if (fault.code !== undefined) throw new SeamError(fault.code, fault.error, { ...(fault.details ? { details: fault.details } : {}), ...(fault.hint ? { hint: fault.hint } : {}) })
    throw new CliError(fault.error, fault.hint)
  }
  return {
    pid,
    url,
    get: <T>(route: string, signal?: AbortSignal) => request<T>(route, signal ? { signal } : {}),
    post: <T>(route: string, body: unknown, signal?: AbortSignal) => request<T>(route, { method: 'POST', body: JSON.stringify(body), ...(signal ? { signal } : {}) }),
  }
}

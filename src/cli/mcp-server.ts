import type { Readable, Writable } from 'node:stream'
import type { Root } from '../runtime/root.js'
import { messageOf } from '../errors.js'
import { CliError, UsageError } from './errors.js'

export interface ServeOptions {
  readonly session?: string
  readonly principal?: { subjectId: string; roles?: string[] }
  /** One line per MCP session event and call. */
  readonly log?: (line: string) => void
}

export interface StdioServeOptions extends ServeOptions {
  readonly stdin?: Readable
  readonly stdout?: Writable
}

export interface HttpServeOptions extends ServeOptions {
  readonly host: string
  readonly port: number
  readonly token?: string
}

/** What `src/seams/mcp/serve.ts` provides: the live generation served over MCP. */
export interface ServeModule {
  serveStdio(root: Root, options?: StdioServeOptions): Promise<{ close(): Promise<void>; closed?: Promise<void> }>
  serveHttp(root: Root, options: HttpServeOptions): Promise<{ url: string; close(): Promise<void> }>
}

// A variable specifier keeps the server out of the CLI's load path until a command needs it.
const SERVE_MODULE = '../seams/mcp/serve.js'

/** Loads the MCP server module; a missing one is a clear error, never a stack trace. */
export async function loadServe(specifier = SERVE_MODULE): Promise<ServeModule> {
  try {
    return (await import(specifier)) as ServeModule
  } catch (error) {
    const missing = (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && messageOf(error).includes(specifier.replace(/^(\.\.\/)+/, '').replace(/\.js$/, ''))
    if (!missing) throw error
    throw new CliError('serving over MCP is not available in this build (src/seams/mcp/serve.ts is missing)', 'update seam-runtime, or pass --no-mcp to `seam dev`')
  }
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i

export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host)
}

/**
 * Validates `--host`, `--port` and `--token` (or `SEAM_MCP_TOKEN`): anything but loopback needs
 * a bearer token, so a dev server is never open to the network by accident.
 */
export function httpServeOptions(flags: { host: string; port: string; token?: string }, env: NodeJS.ProcessEnv): HttpServeOptions {
  const port = Number(flags.port)
  if (!/^\d+$/.test(flags.port) || port > 65_535) throw new UsageError(`--port must be a port number (0-65535), got "${flags.port}"`)
  const host = flags.host.trim()
  if (host === '') throw new UsageError('--host must not be empty')
  const token = flags.token ?? (env.SEAM_MCP_TOKEN || undefined)
  if (!isLoopback(host) && !token) {
    throw new UsageError(`serving MCP on ${host} (not loopback) requires a bearer token`, 'pass --token <token> or set SEAM_MCP_TOKEN, or use --host 127.0.0.1')
  }
  return token ? { host, port, token } : { host, port }
}

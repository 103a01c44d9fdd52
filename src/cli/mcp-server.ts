import type { McpHttpOptions } from '../mcp/server/serve.js'
import { UsageError } from './errors.js'

/** The MCP server (`serveStdio`, `serveHttp`), loaded only by the commands that serve, so the others start fast. */
export function loadServe(): Promise<typeof import('../mcp/server/serve.js')> {
  return import('../mcp/server/serve.js')
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i

export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host)
}

export type HttpServeOptions = McpHttpOptions & { host: string; port: number }

/**
 * Validates `--host`, `--port` and `--token` (or `SEAM_MCP_TOKEN`) before anything starts:
 * anything but loopback needs a bearer token, so a dev server is never open to the network by accident.
 */
export function httpServeOptions(flags: { host: string; port: string; token?: string }, env: NodeJS.ProcessEnv): HttpServeOptions {
  const port = Number(flags.port)
  if (!/^\d+$/.test(flags.port) || port > 65_535) throw new UsageError(`--port must be a port number (0-65535), got "${flags.port}"`)
  const host = flags.host.trim()
  if (host === '') throw new UsageError('--host must not be empty')
  const given = flags.token ?? (env.SEAM_MCP_TOKEN?.trim() || undefined)
  const token = given?.trim()
  if (given !== undefined && !token) throw new UsageError('--token must not be blank')
  if (token && /\s/.test(token)) throw new UsageError('--token must not contain white space', 'an Authorization header carries one token without spaces')
  if (!isLoopback(host) && !token) {
    throw new UsageError(`serving MCP on ${host} (not loopback) requires a bearer token`, 'pass --token <token> or set SEAM_MCP_TOKEN, or use --host 127.0.0.1')
  }
  return token ? { host, port, token } : { host, port }
}

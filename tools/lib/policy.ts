import { basename } from 'node:path'
import type { PreExecuteHook } from 'seam-runtime'
import type { WorkspaceFs } from './fs-seam.js'

const SECRET_FILE = /^(?:\.env(?:\..+)?|\.npmrc|\.netrc|id_(?:rsa|ecdsa|ed25519)|.+\.(?:pem|key|p12))$/i

/** What a write to `path` risks, as far as the path alone shows; `undefined` when nothing. */
export function pathRisk(path: string): string | undefined {
  const parts = path.split(/[\\/]+/)
  if (parts.includes('.git')) return 'writes inside .git'
  if (SECRET_FILE.test(basename(path))) return `writes ${basename(path)}, a file that usually holds secrets`
  return undefined
}

/**
 * Asks before `toolName` replaces an existing file. A pre-execute hook, because whether the file
 * exists needs the filesystem seam and a tool's `risk(args)` sees only its arguments. A path that
 * does not resolve inside the workspace is left to the guard, which runs after approval.
 */
export function overwriteHook(fs: WorkspaceFs, toolName: string): PreExecuteHook {
  return async (exec, next) => {
    const decision = await next()
    if (exec.name !== toolName || decision.kind === 'deny') return decision
    const path = exec.arguments.path
    if (typeof path !== 'string') return decision
    const real = await fs.resolve(path).catch(() => undefined)
    const info = real === undefined ? undefined : await fs.stat(real).catch(() => undefined)
    if (real === undefined || info?.type !== 'file') return decision
    const reason = `${fs.display(real)} exists and would be overwritten`
    return { kind: 'ask', reason: decision.kind === 'ask' && decision.reason ? `${decision.reason}; ${reason}` : reason }
  }
}

import { basename } from 'node:path'

const SECRET_FILE = /^(?:\.env(?:\..+)?|\.npmrc|\.netrc|id_(?:rsa|ecdsa|ed25519)|.+\.(?:pem|key|p12))$/i

/** What a write to `path` risks, as far as the path alone shows; `undefined` when nothing. */
export function pathRisk(path: string): string | undefined {
  const parts = path.split(/[\\/]+/)
  // Case-insensitive: `.GIT/hooks` is the same folder on macOS and Windows file systems.
  if (parts.some((part) => part.toLowerCase() === '.git')) return 'writes inside .git'
  if (SECRET_FILE.test(basename(path))) return `writes ${basename(path)}, a file that usually holds secrets`
  return undefined
}

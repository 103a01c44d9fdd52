import { lstat, readlink, realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { SeamError } from 'seam-runtime'

/** The stable reason for a path that resolves outside the workspace root. */
export const PATH_ESCAPE_REASON = 'path escapes the workspace root'

// The kernel's own limit on symlinks followed in one lookup (Linux MAXSYMLINKS).
const MAX_LINKS = 40

/**
 * The real absolute path `input` names, relative paths resolved against `base`: every symlink is
 * followed, also in a path whose last parts do not exist yet (the parent of a new file) and in a
 * dangling symlink, so a later create cannot land where the link points.
 */
export async function realPathOf(base: string, input: string): Promise<string> {
  if (input.includes('\0')) throw new SeamError('PATH_ESCAPE', 'a path must not contain NUL bytes', { details: { path: input } })
  return follow(resolve(base, input), 0)
}

async function follow(path: string, links: number): Promise<string> {
  try {
    return await realpath(path)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
  const parent = dirname(path)
  if (parent === path) return path
  const candidate = join(await follow(parent, links), basename(path))
  // The last part is missing, or it is a symlink whose target is missing: follow the link by hand.
  const stats = await lstat(candidate).catch(() => undefined)
  if (!stats?.isSymbolicLink()) return candidate
  if (links >= MAX_LINKS) throw Object.assign(new Error(`too many symbolic links: ${candidate}`), { code: 'ELOOP' })
  return follow(resolve(dirname(candidate), await readlink(candidate)), links + 1)
}

/** Whether the real path `real` is `realRoot` or below it. */
export function isInside(realRoot: string, real: string): boolean {
  const rel = relative(realRoot, real)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

/** `input` resolved (symlinks included) under `realRoot`, or a `PATH_ESCAPE` error with the stable reason. */
export async function confine(realRoot: string, input: string): Promise<string> {
  const real = await realPathOf(realRoot, input)
  if (!isInside(realRoot, real)) throw new SeamError('PATH_ESCAPE', PATH_ESCAPE_REASON, { details: { path: input } })
  return real
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'

/**
 * Which state of the project's own files a type-check saw: each file's content hash, `null` when
 * it was absent. A result is current only while every file still has the state it was checked in.
 */
export type FileState = Readonly<Record<string, string | null>>

export function contentHash(text: string): string {
  return createHash('sha1').update(text).digest('hex')
}

/** The state of `files` on disk now. */
export async function fileStateOf(files: Iterable<string>): Promise<FileState> {
  const state: Record<string, string | null> = {}
  await Promise.all(
    [...new Set(files)].map(async (file) => {
      state[file] = await readFile(file, 'utf8').then(contentHash, () => null)
    }),
  )
  return state
}

/** The files of `seen` whose state on disk is no longer the one the check saw (none: still current). */
export async function changedSince(seen: FileState): Promise<string[]> {
  const now = await fileStateOf(Object.keys(seen))
  return Object.keys(seen).filter((file) => now[file] !== seen[file])
}

/** The project's own files among a program's: inside `dir` and not under a node_modules folder. */
export function ownFiles(dir: string, files: Iterable<string>): string[] {
  return [...files].filter((file) => {
    const relative = path.relative(dir, file)
    return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) && !relative.split(/[\\/]/).includes('node_modules')
  })
}

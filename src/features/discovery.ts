import type { Dirent } from 'node:fs'
import { readdir, realpath, stat } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'

/** What a plugin folder holds, as absolute paths, each list sorted. */
export interface PluginFolder {
  readonly pluginFile?: string
  readonly toolFiles: string[]
  readonly skillFiles: string[]
  /** Every file below `agent/resources/` (subfolders too; dot files and links leaving the folder skipped). */
  readonly resourceFiles: string[]
}

/** At most this many resource files per plugin, and this many folders deep. */
export const MAX_RESOURCE_FILES = 10_000
const MAX_RESOURCE_DEPTH = 16

/** The names a plugin file may have, in the order they are looked for. */
export const PLUGIN_FILES: readonly string[] = ['plugin.ts', 'plugin.mts', 'plugin.js', 'plugin.mjs']
const TOOL_FILE = /^[^.].*\.(?:ts|mts|js|mjs)$/
const NOT_A_TOOL = /\.(?:test|spec)\.[mc]?[jt]s$|\.d\.[mc]?ts$/
const SKILL_FILE = /^[^.].*\.md$/

/**
 * Lists a plugin folder: `plugin.ts` (or `.mts`/`.js`/`.mjs`), the files directly in `tools/` (files
 * in its subfolders are helpers; tests and declarations are skipped) and `agent/skills/*.md`. Missing
 * folders are empty. A symlink whose target lies outside `dir` is ignored.
 */
export async function discoverPluginFolder(dir: string): Promise<PluginFolder> {
  const root = resolve(dir)
  const inside = insideOf(await realpath(root))
  let pluginFile: string | undefined
  for (const name of PLUGIN_FILES) {
    const path = join(root, name)
    if (await isFileInside(path, inside)) {
      pluginFile = path
      break
    }
  }
  const toolFiles = await listFiles(join(root, 'tools'), inside, (n) => TOOL_FILE.test(n) && !NOT_A_TOOL.test(n))
  const skillFiles = await listFiles(join(root, 'agent', 'skills'), inside, (n) => SKILL_FILE.test(n))
  const resourceFiles: string[] = []
  await listTree(join(root, 'agent', 'resources'), inside, resourceFiles, 0)
  resourceFiles.sort()
  return pluginFile === undefined ? { toolFiles, skillFiles, resourceFiles } : { pluginFile, toolFiles, skillFiles, resourceFiles }
}

/** The files of `folder` and its subfolders whose real paths lie inside the plugin folder. */
async function listTree(folder: string, inside: (real: string) => boolean, into: string[], depth: number): Promise<void> {
  if (depth > MAX_RESOURCE_DEPTH) return
  const real = await realpath(folder).catch(() => undefined)
  if (real === undefined || !inside(real)) return
  let entries: Dirent[]
  try {
    entries = await readdir(folder, { withFileTypes: true })
  } catch {
    return
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.') || into.length >= MAX_RESOURCE_FILES) continue
    const path = join(folder, entry.name)
    if (entry.isDirectory()) await listTree(path, inside, into, depth + 1)
    else if (entry.isFile() || (entry.isSymbolicLink() && (await isFileInside(path, inside)))) into.push(path)
    else if (entry.isSymbolicLink()) {
      const target = await realpath(path).catch(() => undefined)
      if (target !== undefined && inside(target) && (await stat(target)).isDirectory()) await listTree(path, inside, into, depth + 1)
    }
  }
}

async function listFiles(folder: string, inside: (real: string) => boolean, wanted: (name: string) => boolean) {
  const real = await realpath(folder).catch(() => undefined)
  if (real === undefined || !inside(real)) return []
  let entries: Dirent[]
  try {
    entries = await readdir(folder, { withFileTypes: true })
  } catch {
    return []
  }
  const files: string[] = []
  for (const entry of entries) {
    if (!wanted(entry.name) || !(entry.isFile() || entry.isSymbolicLink())) continue
    const path = join(folder, entry.name)
    if (entry.isFile() || (await isFileInside(path, inside))) files.push(path)
  }
  return files.sort()
}

async function isFileInside(path: string, inside: (real: string) => boolean): Promise<boolean> {
  try {
    const real = await realpath(path)
    return inside(real) && (await stat(real)).isFile()
  } catch {
    return false
  }
}

function insideOf(realRoot: string): (real: string) => boolean {
  return (real) => {
    const rel = relative(realRoot, real)
    return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep))
  }
}

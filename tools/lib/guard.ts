import type { Guard } from 'seam-runtime'
import { confine } from './confine.js'

/** The arguments of each workspace tool that name a path (the guard checks these, by tool name). */
export const PATH_ARGUMENTS: Readonly<Record<string, readonly string[]>> = {
  read_file: ['path'],
  list_files: ['path'],
  search_files: ['path'],
  write_file: ['path'],
  run_command: ['cwd'],
}

/**
 * The workspace confinement rule as a monotonic guard: every path argument of a workspace tool must
 * resolve (symlinks included) inside `realRoot`, else the call is denied with the stable reason. It
 * checks the root itself rather than asking the fs provider, so a host that mounts an unconfined
 * provider still cannot widen the rule. `qualify` maps a tool's file name to the name the model sees.
 */
export function workspaceGuard(realRoot: string, qualify: (name: string) => string = (name) => name): Guard {
  const table = new Map(Object.entries(PATH_ARGUMENTS).map(([name, keys]) => [qualify(name), keys]))
  return async (exec) => {
    const keys = table.get(exec.name)
    if (keys === undefined) return undefined
    for (const key of keys) {
      const value = exec.arguments[key]
      if (value === undefined) continue
      if (typeof value !== 'string') return `${key} must be a path`
      try {
        await confine(realRoot, value)
      } catch (error) {
        const { code, message } = error as { code?: unknown; message?: unknown }
        if (code === 'PATH_ESCAPE') return String(message)
        // Fail closed: a path the guard cannot resolve (a symlink loop, no permission) is not allowed.
        return `${key} could not be resolved inside the workspace root (${typeof code === 'string' ? code : 'error'})`
      }
    }
    return undefined
  }
}

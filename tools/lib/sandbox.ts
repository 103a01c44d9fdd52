import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join, resolve } from 'node:path'

/** Set to `off` to run commands without bubblewrap even where it is installed. */
export const SANDBOX_ENV = 'SEAM_RUN_COMMAND_SANDBOX'

let found: string | null | undefined

/** The `bwrap` executable on the host's PATH (looked up once), or `undefined` when not installed or turned off. */
export function bwrapPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env[SANDBOX_ENV] === 'off' || process.platform !== 'linux') return undefined
  found ??= which('bwrap', env.PATH) ?? null
  return found ?? undefined
}

/** One line for `seam dev`: whether `run_command` runs its commands in a sandbox. */
export function sandboxStatus(env: NodeJS.ProcessEnv = process.env): string {
  if (bwrapPath(env)) return 'sandboxed (bwrap)'
  return env[SANDBOX_ENV] === 'off' ? `not sandboxed: ${SANDBOX_ENV}=off` : 'not sandboxed: bwrap not installed'
}

/**
 * The argv that runs `argv` inside bubblewrap: the whole file system read-only, `workspace` the only
 * writable mount (plus a private /tmp), its own /dev and a PID namespace with its own /proc (so the
 * host's `/proc/<pid>/environ` is out of reach), and only `env` (already stripped of secrets) inside.
 * Everything in the namespace dies with its first process and with the host.
 */
export function sandboxArgv(bwrap: string, argv: readonly string[], options: { workspace: string; cwd: string; env: NodeJS.ProcessEnv }): string[] {
  const program = which(argv[0]!, options.env.PATH, options.cwd)
  // bwrap would report a missing program as its own exit code 1: say it the way a plain spawn does.
  if (program === undefined) throw new Error(`command not found: ${argv[0]}`)
  const setenv = Object.entries(options.env).flatMap(([name, value]) => (value === undefined ? [] : ['--setenv', name, value]))
  return [
    bwrap,
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--bind', options.workspace, options.workspace,
    '--unshare-pid',
    '--die-with-parent',
    '--clearenv',
    ...setenv,
    '--chdir', options.cwd,
    '--',
    program,
    ...argv.slice(1),
  ]
}

/** Where `name` runs from: itself when it has a slash (against `cwd`), else the first executable on `path`. */
function which(name: string, path = '', cwd = process.cwd()): string | undefined {
  const candidates = name.includes('/') ? [isAbsolute(name) ? name : resolve(cwd, name)] : path.split(delimiter).filter(Boolean).map((dir) => join(dir, name))
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK)
      return statSync(file).isFile()
    } catch {
      return false
    }
  })
}

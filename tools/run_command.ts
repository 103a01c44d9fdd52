import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { commandEnv } from './lib/env.js'
import { fsToken } from './lib/fs-seam.js'
import { runProcess } from './lib/process-tree.js'
import { bwrapPath, sandboxArgv } from './lib/sandbox.js'
import { fsFailure } from './lib/text.js'

const MAX_OUTPUT = 64 * 1024
const DEFAULT_TIMEOUT_MS = 30_000
// Below the tool's own deadline, so a command that runs too long still returns its partial output.
const MAX_TIMEOUT_MS = 55_000
const KILL_GRACE_MS = 1_000

export default defineTool({
  description:
    'Run a program in the workspace and return its exit code, stdout and stderr (64 KiB each; the middle ' +
    'of longer output is cut). `argv` is the program and its arguments, with no shell: no pipes, globs, ' +
    'redirects or `&&` (run `sh -c "…"` explicitly when you need them). The user approves every run. ' +
    'Variables that look like secrets are removed from its environment. Where bubblewrap is installed the ' +
    'command runs in a sandbox: only the workspace (and a private /tmp) is writable.',
  input: z.object({
    argv: z.array(z.string()).min(1).describe('Program and arguments, e.g. ["npx", "vitest", "run", "src/x.test.ts"]'),
    cwd: z.string().min(1).optional().describe('Working folder, relative to the workspace root (default: the root)'),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(MAX_TIMEOUT_MS)
      .default(DEFAULT_TIMEOUT_MS)
      .describe(`Stop the command after this many ms (at most ${MAX_TIMEOUT_MS})`),
  }),
  output: z.object({
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    stdout: z.string(),
    stderr: z.string(),
    stdoutTruncated: z.boolean(),
    stderrTruncated: z.boolean(),
    timedOut: z.boolean(),
    durationMs: z.number(),
  }),
  approval: 'always',
  timeoutMs: 60_000,
  annotations: { destructiveHint: true },
  isConcurrencySafe: () => false,
  async execute({ argv, cwd, timeoutMs }, ctx) {
    const fs = ctx.use(fsToken)
    let folder: string
    try {
      folder = await fs.resolve(cwd ?? '.')
      if ((await fs.stat(folder))?.type !== 'dir') throw new Error(`${cwd} is not a folder`)
    } catch (error) {
      throw fsFailure(error, cwd ?? '.')
    }
    const { env } = commandEnv(process.env)
    const bwrap = bwrapPath()
    const command = bwrap ? sandboxArgv(bwrap, argv, { workspace: fs.root, cwd: folder, env }) : argv
    return runProcess(command, { cwd: folder, env, signal: ctx.signal, timeoutMs, maxOutput: MAX_OUTPUT, killGraceMs: KILL_GRACE_MS })
  },
  render: (args, value) => {
    const status = value.timedOut
      ? `stopped after ${args.timeoutMs} ms (timeout)`
      : value.exitCode === null
        ? `killed by ${value.signal}`
        : `exit code ${value.exitCode}`
    const parts = [`$ ${args.argv.map(quote).join(' ')}`, `${status}, ${value.durationMs} ms`]
    if (value.stdout) parts.push(`--- stdout ---\n${value.stdout}`)
    if (value.stderr) parts.push(`--- stderr ---\n${value.stderr}`)
    return parts.join('\n')
  },
})

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`
}

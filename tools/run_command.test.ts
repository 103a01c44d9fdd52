import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, readFile, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { PATH_ESCAPE_REASON } from './lib/confine.js'
import { procStat } from './lib/process-tree.js'
import { bwrapPath, SANDBOX_ENV } from './lib/sandbox.js'
import { recordingApproval, textOf, workspaceRoot } from './lib/testing.js'

const node = process.execPath

/** Running, and not a zombie (where PID 1 does not reap orphans, a dead grandchild stays a zombie). */
function alive(pid: number): boolean {
  if (process.platform !== 'linux') {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  const fields = procStat(pid)
  return fields !== undefined && fields[0] !== 'Z'
}

/**
 * The live host processes whose command line holds `marker`. A sandboxed command has PIDs of its own
 * namespace, so a test finds its processes by a marker in their argv rather than by a PID they print.
 */
function marked(marker: string): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker) && alive(Number(name))) pids.push(Number(name))
    } catch {
      // Gone meanwhile.
    }
  }
  return pids
}

/** A unique marker, and the SIGKILL of whatever still carries it when the test ends. */
function marker(): string {
  const mark = `seam-mark-${randomUUID()}`
  onTestFinished(() => {
    for (const pid of marked(mark)) process.kill(pid, 'SIGKILL')
  })
  return mark
}

async function eventually(check: () => boolean | Promise<boolean>, withinMs = 5000): Promise<void> {
  const end = Date.now() + withinMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function approvedRoot() {
  const approval = recordingApproval('allowed-once')
  return { ...(await workspaceRoot({ approval: approval.port })), approval }
}

// Every behaviour holds with the sandbox (bubblewrap: CI installs it) and without it.
describe.each([
  { mode: 'sandboxed', sandbox: 'on' },
  { mode: 'not sandboxed', sandbox: 'off' },
])('run_command ($mode)', ({ sandbox }) => {
  beforeEach(() => {
    const before = process.env[SANDBOX_ENV]
    process.env[SANDBOX_ENV] = sandbox
    if (sandbox === 'on') expect(bwrapPath(), 'bwrap must be installed (apt-get install bubblewrap)').toBeDefined()
    return () => {
      if (before === undefined) delete process.env[SANDBOX_ENV]
      else process.env[SANDBOX_ENV] = before
    }
  })

  it('runs node -e after approval and returns exit code, stdout and stderr', async () => {
    const { call, approval } = await approvedRoot()
    const outcome = await call('run_command', { argv: [node, '-e', 'console.log("hello"); console.error("warn")'] })
    expect(outcome).toMatchObject({
      status: 'completed',
      value: { exitCode: 0, signal: null, stdout: 'hello\n', stderr: 'warn\n', stdoutTruncated: false, timedOut: false },
    })
    expect(approval.requests.map((r) => r.reason)).toEqual(['"run_command" always asks for approval'])
    expect(textOf(outcome)).toMatch(/^\$ \S+ -e 'console\.log\("hello"\); console\.error\("warn"\)'\nexit code 0, \d+ ms\n--- stdout ---\nhello\n\n--- stderr ---\nwarn\n$/)
  })

  it('asks every time, and runs nothing when nobody can approve', async () => {
    const { call, workspace } = await workspaceRoot()
    const outcome = await call('run_command', { argv: [node, '-e', 'require("fs").writeFileSync("ran.txt", "x")'] })
    expect(outcome).toMatchObject({ status: 'denied', code: 'APPROVAL_UNAVAILABLE' })
    await expect(readFile(join(workspace, 'ran.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('reports a failing command as a completed call with its exit code', async () => {
    const { call } = await approvedRoot()
    const outcome = await call('run_command', { argv: [node, '-e', 'console.error("boom"); process.exit(3)'] })
    expect(outcome).toMatchObject({ status: 'completed', value: { exitCode: 3, stderr: 'boom\n' } })
  })

  it('passes arguments without a shell', async () => {
    const { call } = await approvedRoot()
    const outcome = await call('run_command', { argv: [node, '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', '$HOME', '*', 'a b; rm -rf /'] })
    expect(JSON.parse((outcome.value as { stdout: string }).stdout)).toEqual(['$HOME', '*', 'a b; rm -rf /'])
  })

  it('runs in the workspace root, or in cwd inside it', async () => {
    const { call, workspace } = await approvedRoot()
    await mkdir(join(workspace, 'pkg'))
    const cwdOf = async (args: Record<string, unknown>) =>
      ((await call('run_command', { argv: [node, '-e', 'console.log(process.cwd())'], ...args })).value as { stdout: string }).stdout.trim()
    expect(await cwdOf({})).toBe(workspace)
    expect(await cwdOf({ cwd: 'pkg' })).toBe(join(workspace, 'pkg'))
  })

  it('denies a cwd outside the workspace in the guard, even after approval', async () => {
    const { call, workspace, outside, approval } = await approvedRoot()
    await symlink(outside, join(workspace, 'elsewhere'))
    for (const cwd of ['..', outside, 'elsewhere']) {
      const outcome = await call('run_command', { argv: [node, '-e', 'require("fs").writeFileSync("ran.txt", "x")'], cwd })
      expect(outcome).toMatchObject({ status: 'denied', code: 'DENIED', policy: 'guard', reason: PATH_ESCAPE_REASON })
    }
    expect(approval.requests).toHaveLength(3)
    await expect(readFile(join(outside, 'ran.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('says when the program does not exist', async () => {
    const { call } = await approvedRoot()
    const outcome = await call('run_command', { argv: ['surely-not-a-program-xyz'] })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(textOf(outcome)).toContain('command not found: surely-not-a-program-xyz')
  })

  it('stops a command at its timeoutMs and returns what it printed', async () => {
    const { call } = await approvedRoot()
    const outcome = await call('run_command', { argv: ['sh', '-c', 'echo started; sleep 30'], timeoutMs: 1000 })
    expect(outcome).toMatchObject({ status: 'completed', value: { timedOut: true, exitCode: null, signal: 'SIGTERM', stdout: 'started\n' } })
    expect(textOf(outcome)).toContain('stopped after 1000 ms (timeout)')
  })

  it('stops a background job that moved to a process group of its own (set -m), and settles at once', async () => {
    const { call, workspace } = await approvedRoot()
    const mark = marker()
    // The job says it started, then sleeps (under the marker's name) holding the command's output pipes.
    const script = `set -m; bash -c 'echo $$ > job.pid; exec -a ${mark} sleep 150' & sleep 0.3; echo started`
    const started = Date.now()
    const outcome = await call('run_command', { argv: ['bash', '-c', script], timeoutMs: 5_000 })
    await readFile(join(workspace, 'job.pid'), 'utf8')
    expect(outcome).toMatchObject({ status: 'completed', value: { exitCode: 0, stdout: 'started\n', timedOut: false } })
    // Not the 5 s timeout, not the 60 s default: the leader exited and its session was stopped.
    expect(Date.now() - started).toBeLessThan(4_000)
    await eventually(() => marked(mark).length === 0, 3_000)
  })

  it('settles soon after the command exits even when a daemon of its own session keeps the output pipes', async () => {
    const { call, workspace } = await approvedRoot()
    const mark = marker()
    const script = `setsid bash -c 'echo $$ > daemon.pid; exec -a ${mark} sleep 150' & sleep 0.3; echo started`
    const started = Date.now()
    const outcome = await call('run_command', { argv: ['bash', '-c', script], timeoutMs: 10_000 })
    await readFile(join(workspace, 'daemon.pid'), 'utf8')
    expect(outcome).toMatchObject({ status: 'completed', value: { exitCode: 0, stdout: 'started\n' } })
    expect(Date.now() - started).toBeLessThan(5_000)
    // In the sandbox even the daemon is gone: it dies with the PID namespace.
    if (sandbox === 'on') await eventually(() => marked(mark).length === 0, 3000)
  })

  it('kills the whole process tree when the call is cancelled', async () => {
    const { call, workspace, abort } = await approvedRoot()
    const mark = marker()
    // The command starts a grandchild that ignores SIGTERM; each says when it is ready. Both carry the marker.
    const grandchild = 'process.on("SIGTERM", () => {}); require("fs").writeFileSync("grandchild.ready", ""); setInterval(() => {}, 1000)'
    const script = `
      require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}, ${JSON.stringify(mark)}], { stdio: 'ignore' })
      require('fs').writeFileSync('child.ready', '')
      setInterval(() => {}, 1000)`
    const running = call('run_command', { argv: [node, '-e', script, mark] })
    const ready = (name: string) => readFile(join(workspace, name)).then(() => true, () => false)
    await eventually(async () => (await ready('child.ready')) && (await ready('grandchild.ready')))
    expect(marked(mark).length).toBeGreaterThanOrEqual(2)
    const aborted = Date.now()
    abort()
    const outcome = await running
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(outcome.details?.abandoned).toBeUndefined()
    // The body settled only after the tree was gone. Unsandboxed: SIGTERM, then SIGKILL (after 1 s) for the
    // one that ignored it; sandboxed, the kernel kills the whole PID namespace with its first process.
    expect(marked(mark)).toEqual([])
    if (sandbox === 'off') expect(Date.now() - aborted).toBeGreaterThanOrEqual(900)
  })

  it('stops background processes a command leaves behind when it exits', async () => {
    const { call } = await approvedRoot()
    const mark = marker()
    const started = Date.now()
    const outcome = await call('run_command', { argv: ['bash', '-c', `bash -c 'exec -a ${mark} sleep 30' & echo started`] })
    expect(outcome).toMatchObject({ status: 'completed', value: { exitCode: 0, stdout: 'started\n' } })
    expect(Date.now() - started).toBeLessThan(10_000)
    await eventually(() => marked(mark).length === 0, 3000)
  })

  it('removes secret-looking variables from the environment and turns colours off', async () => {
    const { call } = await approvedRoot()
    // Secret names as they come in practice, not only as whole `_`-separated words.
    const secrets: Record<string, string> = {
      SEAM_TEST_API_KEY: 'sk-should-not-leak',
      SEAM_TEST_GITHUBTOKEN: 'ghp-should-not-leak',
      SEAM_TEST_MYSQL_PWD: 'pwd-should-not-leak',
      SEAM_TEST_STRIPE_KEY: 'sk_live-should-not-leak',
      SEAM_TEST_SENTRY_DSN: 'dsn-should-not-leak',
      SEAM_TEST_GITHUB_PAT: 'pat-should-not-leak',
      SEAM_TEST_MONGO_URI: 'mongodb://user:uri-should-not-leak@db/app',
    }
    Object.assign(process.env, secrets, { SEAM_TEST_PLAIN: 'visible' })
    onTestFinished(() => {
      for (const name of [...Object.keys(secrets), 'SEAM_TEST_PLAIN']) delete process.env[name]
    })
    const outcome = await call('run_command', { argv: [node, '-e', 'console.log(JSON.stringify(process.env))'] })
    const env = JSON.parse((outcome.value as { stdout: string }).stdout) as Record<string, string>
    for (const name of Object.keys(secrets)) expect(env[name], name).toBeUndefined()
    expect(env.SEAM_TEST_PLAIN).toBe('visible')
    expect(env.PATH).toBeDefined()
    expect(env.NO_COLOR).toBe('1')
    expect(JSON.stringify(outcome)).not.toContain('should-not-leak')
  })

  it("keeps a connection string out of the command's environment, and the host's own secrets out of the journal", async () => {
    Object.assign(process.env, {
      SEAM_TEST_MY_DB_CONN: 'Server=db;Database=app;User Id=sa;Password=conn-should-not-leak;',
      SEAM_TEST_HOST_TOKEN: 'host-token-should-not-leak',
    })
    onTestFinished(() => {
      delete process.env.SEAM_TEST_MY_DB_CONN
      delete process.env.SEAM_TEST_HOST_TOKEN
    })
    const { call, journal, turn } = await approvedRoot()
    const own = await call('run_command', { argv: [node, '-e', 'console.log(JSON.stringify(process.env))'] })
    expect(JSON.parse((own.value as { stdout: string }).stdout).SEAM_TEST_MY_DB_CONN).toBeUndefined()
    // Without a sandbox a command can still read its parent's environment: the journal must not keep it.
    const parent = await call('run_command', { argv: ['sh', '-c', `tr '\\0' '\\n' < /proc/${process.pid}/environ`] })
    expect(parent.status).toBe('completed')
    const stored = JSON.stringify(await journal.read(turn.turnId))
    expect(stored).not.toContain('should-not-leak')
  })

  it('keeps 64 KiB of each stream, the start and the end, and says it cut', async () => {
    const { call } = await approvedRoot()
    const outcome = await call('run_command', { argv: [node, '-e', 'process.stdout.write("<" + "a".repeat(200000) + ">")'] })
    const value = outcome.value as { stdout: string; stdoutTruncated: boolean; stderrTruncated: boolean }
    expect(value.stdoutTruncated).toBe(true)
    expect(value.stderrTruncated).toBe(false)
    expect(value.stdout.startsWith('<aaa')).toBe(true)
    expect(value.stdout.endsWith('aaa>')).toBe(true)
    expect(value.stdout).toContain(`[… ${200002 - 64 * 1024} bytes omitted …]`)
  })

  it('is never concurrency-safe, always asks, and has a deadline', async () => {
    const { tools, turn } = await workspaceRoot()
    const tool = tools.get('run_command')!
    expect(tool.isConcurrencySafe!({ argv: ['true'], timeoutMs: 1000 })).toBe(false)
    expect(tool.timeoutMs).toBe(60_000)
    expect(turn.capabilities.tools.find((t) => t.name === 'run_command')).toMatchObject({ approval: 'always' })
  })

  it('rejects an empty argv as invalid arguments', async () => {
    const { call } = await approvedRoot()
    expect(await call('run_command', { argv: [] })).toMatchObject({ status: 'failed', code: 'INVALID_ARGS' })
  })
})

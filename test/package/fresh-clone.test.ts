import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { chmod, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'

/**
 * The README's promises from a fresh clone (its committed state, the shared node_modules linked in):
 * `npm start` runs `seam dev` on the repository's own plugin with no install script having built
 * dist/, and `npm run build` leaves `seam` runnable by `npx`.
 */
const repo = fileURLToPath(new URL('../..', import.meta.url))
const run = promisify(execFile)
const executable = async (file: string) => ((await stat(file)).mode & 0o111) === 0o111

/** `npm start` in `dir` until `seam dev` is watching, then Ctrl-C (SIGINT to npm and seam alike); its output. */
async function startUntilWatching(dir: string): Promise<string> {
  const child: ChildProcess = spawn('npm', ['start', '--', '--no-mcp', '--no-check'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let closed = false
  child.on('close', () => {
    closed = true
  })
  // The whole group (npm, node scripts/start.mjs): while any of it holds the pipes, it is there to signal.
  const stop = (signal: NodeJS.Signals) => {
    if (!closed && child.pid !== undefined) process.kill(-child.pid, signal)
  }
  onTestFinished(() => stop('SIGKILL'))
  let output = ''
  const watching = new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk
      if (output.includes('watching for changes')) resolve()
    }
    child.stdout?.on('data', read)
    child.stderr?.on('data', read)
    child.on('exit', (code) => reject(new Error(`npm start exited (${code}) before watching:\n${output}`)))
  })
  await watching
  // 'close': every holder of the pipes is gone, seam dev (which writes to them directly) included.
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  stop('SIGINT')
  await exited
  // npm itself dies of the SIGINT; seam dev stops cleanly and says so.
  expect(output).toMatch(/stopped\n$/)
  return output
}

describe('a fresh clone of the repository', { timeout: 300_000 }, () => {
  let work: string
  let clone: string

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'seam-clone-'))
    clone = join(work, 'seam-runtime')
    await run('git', ['clone', '--quiet', '--no-hardlinks', repo, clone])
    await symlink(await realpath(join(repo, 'node_modules')), join(clone, 'node_modules'))
  }, 120_000)
  afterAll(() => rm(work, { recursive: true, force: true }))

  it('npm start builds the missing dist/ and runs seam dev on the repository’s plugin; after an edit, it runs the edited source', async () => {
    await expect(stat(join(clone, 'dist'))).rejects.toThrow()
    const first = await startUntilWatching(clone)
    expect(first).toMatch(/seam-runtime build: dist\/ brought up to date/)
    expect(first).toMatch(/^ {2}tools +\d+ {2}.*\brun_command\b/m)

    // A stale dist/: the source changed since the last build.
    const dev = join(clone, 'src/cli/commands/dev.ts')
    await writeFile(dev, (await readFile(dev, 'utf8')).replace("'watching for changes; Ctrl-C to stop'", "'watching for changes (edited); Ctrl-C to stop'"))
    expect(await startUntilWatching(clone)).toContain('watching for changes (edited)')
  })

  it('npm run build leaves the seam bin executable, so npx seam runs', async () => {
    const bin = join(clone, 'dist/cli/bin.js')
    // What tsc leaves when it writes the file anew.
    await chmod(bin, 0o644)
    await run('npm', ['run', 'build'], { cwd: clone })
    expect(await executable(bin)).toBe(true)
    const { stdout } = await run('npx', ['--no-install', 'seam', '--version'], { cwd: clone })
    expect(stdout.trim()).toBe(JSON.parse(await readFile(join(clone, 'package.json'), 'utf8')).version)
  })
})

import { randomUUID } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { bwrapPath, SANDBOX_ENV, sandboxStatus } from './lib/sandbox.js'
import { recordingApproval, workspaceRoot } from './lib/testing.js'

interface Value {
  exitCode: number | null
  stdout: string
  stderr: string
}

async function sandboxedRoot() {
  // CI installs bubblewrap (.ci/run): these tests are about the sandbox, so they need it.
  expect(bwrapPath(), 'bwrap must be installed (apt-get install bubblewrap)').toBeDefined()
  const root = await workspaceRoot({ approval: recordingApproval('allowed-once').port })
  const run = async (script: string) => (await root.call('run_command', { argv: ['sh', '-c', script] })).value as Value
  return { ...root, run }
}

describe('run_command in the bubblewrap sandbox', () => {
  it('writes inside the workspace', async () => {
    const { run, workspace } = await sandboxedRoot()
    expect(await run('echo inside > made.txt')).toMatchObject({ exitCode: 0 })
    expect(await readFile(join(workspace, 'made.txt'), 'utf8')).toBe('inside\n')
  })

  it('cannot write anywhere outside the workspace: the file system is read-only, /tmp is private', async () => {
    const { run, outside } = await sandboxedRoot()
    // A host folder outside /tmp (the repository itself may sit under /tmp, which is private inside).
    const hostDir = await mkdtemp('/var/tmp/seam-sandbox-')
    onTestFinished(() => rm(hostDir, { recursive: true, force: true }))
    const escaped = join(hostDir, `escaped-${randomUUID()}.txt`)
    const readOnly = await run(`echo out > ${escaped}`)
    expect(readOnly.exitCode).not.toBe(0)
    expect(readOnly.stderr).toMatch(/Read-only file system/)
    await expect(readFile(escaped)).rejects.toMatchObject({ code: 'ENOENT' })
    // A sibling folder under the host's /tmp: the write lands in the sandbox's own /tmp and vanishes.
    expect(await run(`mkdir -p ${outside} && echo out > ${outside}/escaped.txt`)).toMatchObject({ exitCode: 0 })
    await expect(readFile(join(outside, 'escaped.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it("cannot read the host process's environment through /proc", async () => {
    const { run } = await sandboxedRoot()
    const read = await run(`cat /proc/${process.pid}/environ`)
    expect(read.exitCode).not.toBe(0)
    expect(read.stdout).toBe('')
    // Its own PID namespace: the command's shell is a low PID there, and the host's processes are absent.
    expect(Number((await run('echo $$')).stdout)).toBeLessThan(10)
  })

  it('says whether commands are sandboxed, for seam dev', () => {
    expect(sandboxStatus({ PATH: process.env.PATH })).toBe('sandboxed (bwrap)')
    expect(sandboxStatus({ PATH: process.env.PATH, [SANDBOX_ENV]: 'off' })).toBe(`not sandboxed: ${SANDBOX_ENV}=off`)
  })
})

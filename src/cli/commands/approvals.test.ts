import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, deferApprovals, sqliteJournal } from 'seam-runtime'
import { main } from '../main.js'
import { journalPath } from '../workspace.js'

const NOTE_TOOL = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { appendFileSync } from 'node:fs'
export default defineTool({
  description: 'Append a note.',
  input: z.object({ text: z.string() }),
  approval: 'always',
  execute({ text }) {
    appendFileSync(new URL('../ran.txt', import.meta.url), text + '\\n')
    return 'noted ' + text
  },
})
`

/** A plugin folder with one tool that always asks, and a call to it parked in its journal. */
async function folderWithParkedCall(): Promise<{ dir: string; turnId: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-approvals-'))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  await mkdir(path.join(dir, 'tools'))
  await writeFile(path.join(dir, 'tools', 'note.ts'), NOTE_TOOL)
  await mkdir(path.join(dir, '.seam'))
  const root = await createRoot({ dir, journal: sqliteJournal(journalPath(dir)), approval: deferApprovals() })
  try {
    const turn = await root.beginTurn({ session: 'chat-1', principal: { subjectId: 'ann', roles: [] } })
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'note', arguments: '{"text":"hello"}' })
    expect(outcome.status).toBe('suspended')
    await turn.end()
    return { dir, turnId: turn.turnId }
  } finally {
    await root.close()
  }
}

async function seam(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const chunks = { stdout: '', stderr: '' }
  stdout.on('data', (chunk: Buffer) => (chunks.stdout += chunk.toString()))
  stderr.on('data', (chunk: Buffer) => (chunks.stderr += chunk.toString()))
  const code = await main(argv, { stdin: new PassThrough(), stdout, stderr, env: { NO_COLOR: '1' }, cwd: tmpdir() })
  return { code, ...chunks }
}

/** The same folder with a Code Mode run parked on its call to `note`, which it catches if it fails. */
async function folderWithParkedRun(): Promise<{ dir: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-approvals-'))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  await mkdir(path.join(dir, 'tools'))
  await writeFile(path.join(dir, 'tools', 'note.ts'), NOTE_TOOL)
  await mkdir(path.join(dir, '.seam'))
  const root = await createRoot({ dir, journal: sqliteJournal(journalPath(dir)), approval: deferApprovals(), codeMode: true })
  try {
    const turn = await root.beginTurn({ session: 'chat-1', principal: { subjectId: 'ann', roles: [] } })
    const code = `try { return await tools.note({ text: 'hello' }) } catch (error) { return 'caught ' + error.code }`
    const outcome = await turn.tools.execute({ callId: 'r1', name: 'run_code', arguments: JSON.stringify({ code }) })
    expect(outcome.status).toBe('suspended')
    await turn.end()
    return { dir }
  } finally {
    await root.close()
  }
}

describe('seam approvals', { timeout: 30_000 }, () => {
  it('rejects a parked Code Mode run\'s sub-call and resumes the run: its program catches the rejection', async () => {
    const { dir } = await folderWithParkedRun()
    expect((await seam('approvals', dir)).stdout).toMatch(/r1 +note text="hello"/)
    const decided = await seam('approvals', dir, '--decide', 'r1', 'reject', '--by', 'bob', '--resume')
    expect(decided.code).toBe(0)
    expect(decided.stdout).toContain('r1 note: rejected by bob')
    expect(decided.stdout).toContain('caught DENIED')
    await expect(readFile(path.join(dir, 'ran.txt'), 'utf8')).rejects.toThrow()
    expect((await seam('approvals', dir)).stdout).toContain('no calls are waiting')
  })


  it('lists a parked call, decides it once, and resumes it here with --resume', async () => {
    const { dir } = await folderWithParkedCall()
    const listed = await seam('approvals', dir)
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/c1 +note text="hello" +"note" always asks for approval +ann · chat-1 .* waiting/)
    const json = JSON.parse((await seam('approvals', dir, '--json')).stdout)
    expect(json).toMatchObject([{ callId: 'c1', tool: 'note', arguments: { text: 'hello' }, principal: 'ann' }])
    const decided = await seam('approvals', dir, '--decide', 'c1', 'allow', '--by', 'bob', '--resume')
    expect(decided.stderr).toBe(`local (no seam dev running): read ${journalPath(dir)}\n`)
    expect(decided.code).toBe(0)
    expect(decided.stdout).toContain('c1 note: allowed-once by bob')
    expect(decided.stdout).toContain('completed')
    expect(decided.stdout).toContain('noted hello')
    const again = await seam('approvals', dir, '--decide', 'c1', 'reject')
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already')
    expect((await seam('approvals', dir)).stdout).toContain('no calls are waiting')
  })

  it('shows parked calls under seam journal until they are settled', async () => {
    const { dir, turnId } = await folderWithParkedCall()
    const before = await seam('journal', dir, '--turn', turnId)
    expect(before.stdout).toContain(`parked ${turnId.slice(0, 8)} c1 note: waiting for a decision`)
    await seam('approvals', dir, '--decide', 'c1', 'reject')
    const after = await seam('journal', dir, '--turn', turnId)
    expect(after.stdout).not.toContain('parked')
    expect(after.stdout).toMatch(/tool\/result .*denied DENIED \(approval\)/)
  })

  it('lists the answers each parked call offers, and refuses --decide with another, leaving the call waiting', async () => {
    const { dir } = await folderWithParkedCall()
    // `note` asks every call (`approval: 'always'`): a grant for the session was never offered.
    expect((await seam('approvals', dir)).stdout).toMatch(/ann · chat-1 .* waiting allow\|reject\n/)
    expect(JSON.parse((await seam('approvals', dir, '--json')).stdout)).toMatchObject([{ callId: 'c1', answers: ['allowed-once', 'rejected'] }])
    const refused = await seam('approvals', dir, '--decide', 'c1', 'allow-session')
    expect(refused.code).toBe(2)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(`local (no seam dev running): read ${journalPath(dir)}\nseam: c1 (note) offers allow or reject, not allow-session; it is still waiting\nhint: seam approvals --decide c1 allow|reject\n`)
    expect((await seam('approvals', dir)).stdout).toMatch(/c1 .* waiting allow\|reject/)
    const allowed = await seam('approvals', dir, '--decide', 'c1', 'allow', '--by', 'bob')
    expect(allowed.code).toBe(0)
    expect(allowed.stdout).toContain('c1 note: allowed-once by bob')
  })

  it('resumes an allowed call with --resume <callId> alone, as the hint after --decide says', async () => {
    const { dir } = await folderWithParkedCall()
    const waiting = await seam('approvals', dir, '--resume', 'c1')
    expect(waiting.code).toBe(2)
    expect(waiting.stderr).toContain('c1 (note) is still waiting for a decision; nothing ran')
    const allowed = await seam('approvals', dir, '--decide', 'c1', 'allow', '--by', 'bob')
    expect(allowed.code).toBe(0)
    expect(allowed.stdout).toContain('resume it with `seam approvals --resume c1`')
    const resumed = await seam('approvals', dir, '--resume', 'c1', '--by', 'bob')
    expect(resumed.stderr).toBe(`local (no seam dev running): read ${journalPath(dir)}\n`)
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('c1 note: allowed-once by bob')
    expect(resumed.stdout).toContain('completed')
    expect(resumed.stdout).toContain('noted hello')
    expect(await readFile(path.join(dir, 'ran.txt'), 'utf8')).toBe('hello\n')
    expect((await seam('approvals', dir)).stdout).toContain('no calls are waiting')
    const gone = await seam('approvals', dir, '--resume', 'c1')
    expect(gone.code).not.toBe(0)
    expect(gone.stderr).toContain('no parked call waiting to be resumed has the call id or resume token "c1"')
  })

  it('refuses --resume with neither a call id nor --decide as a usage error', async () => {
    const { dir } = await folderWithParkedCall()
    const bad = await seam('approvals', dir, '--resume')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--resume needs a call id, or --decide')
  })

  it('refuses --decide without a known answer as a usage error', async () => {
    const { dir } = await folderWithParkedCall()
    const bad = await seam('approvals', dir, '--decide', 'c1', 'maybe')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('allow, allow-session, reject')
  })
})

import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PATH_ESCAPE_REASON } from './lib/confine.js'
import { recordingApproval, textOf, workspaceRoot } from './lib/testing.js'

describe('write_file', () => {
  it('creates a new file without asking: on-risk, and a new file is no risk', async () => {
    const approval = recordingApproval()
    const { call, workspace } = await workspaceRoot({ approval: approval.port })
    const outcome = await call('write_file', { path: 'notes/plan.md', content: '# Plan\n', createDirs: true })
    expect(outcome).toMatchObject({ status: 'completed', value: { path: 'notes/plan.md', bytes: 7, created: true } })
    expect(textOf(outcome)).toBe('Created notes/plan.md (7 bytes).')
    expect(await readFile(join(workspace, 'notes', 'plan.md'), 'utf8')).toBe('# Plan\n')
    expect(approval.requests).toHaveLength(0)
  })

  it('gives a call retried with the same call id in a new turn its first result instead of writing again', async () => {
    const { root, turn, workspace } = await workspaceRoot()
    const write = { callId: 'call_1', name: 'write_file', arguments: JSON.stringify({ path: 'log.md', content: 'one\n' }) }
    expect(await turn.tools.execute(write)).toMatchObject({ status: 'completed', value: { created: true } })
    await writeFile(join(workspace, 'log.md'), 'edited since\n')
    const retry = await root.beginTurn({ session: 's1', principal: { subjectId: 'u1', roles: [] } })
    expect(await retry.tools.execute(write)).toMatchObject({ status: 'completed', value: { created: true }, replayed: true })
    expect(await readFile(join(workspace, 'log.md'), 'utf8')).toBe('edited since\n')
    // Another call id is another write: this one would overwrite, so it asks (and nobody can answer).
    expect(await retry.tools.execute({ ...write, callId: 'call_2' })).toMatchObject({ code: 'APPROVAL_UNAVAILABLE' })
  })

  it('asks before overwriting an existing file and writes once allowed', async () => {
    const approval = recordingApproval('allowed-once')
    const { call, workspace } = await workspaceRoot({ approval: approval.port })
    await writeFile(join(workspace, 'README.md'), 'old\n')
    const outcome = await call('write_file', { path: 'README.md', content: 'new\n' })
    expect(outcome).toMatchObject({ status: 'completed', value: { created: false, bytes: 4 } })
    expect(approval.requests).toHaveLength(1)
    expect(approval.requests[0]!.reason).toBe('README.md exists and would be overwritten')
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toBe('new\n')
  })

  it('leaves the file alone when the overwrite is rejected', async () => {
    const approval = recordingApproval('rejected')
    const { call, workspace } = await workspaceRoot({ approval: approval.port })
    await writeFile(join(workspace, 'README.md'), 'old\n')
    const outcome = await call('write_file', { path: 'README.md', content: 'new\n' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'DENIED', policy: 'approval' })
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toBe('old\n')
  })

  it('is denied with APPROVAL_UNAVAILABLE when an overwrite needs approval and nobody can answer', async () => {
    const { call, workspace } = await workspaceRoot()
    await writeFile(join(workspace, 'README.md'), 'old\n')
    const outcome = await call('write_file', { path: 'README.md', content: 'new\n' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'APPROVAL_UNAVAILABLE', policy: 'approval' })
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toBe('old\n')
    // A new file needs no approval, so it still works in the same conversation.
    expect(await call('write_file', { path: 'other.md', content: 'x' })).toMatchObject({ status: 'completed' })
  })

  it('asks for a write inside .git or to a secrets file, judged from the arguments alone', async () => {
    const approval = recordingApproval('rejected')
    const { call, workspace } = await workspaceRoot({ approval: approval.port })
    await mkdir(join(workspace, '.git'))
    expect(await call('write_file', { path: '.git/config', content: 'x' })).toMatchObject({ status: 'denied', policy: 'approval' })
    expect(await call('write_file', { path: 'app/.env', content: 'x', createDirs: true })).toMatchObject({ status: 'denied' })
    expect(approval.requests.map((r) => r.reason)).toEqual(['writes inside .git', 'writes .env, a file that usually holds secrets'])
    expect(await readdir(workspace)).toEqual(['.git'])
  })

  it('asks for a write that a link leads into .git, and for .GIT written in another case', async () => {
    const approval = recordingApproval('rejected')
    const { call, workspace } = await workspaceRoot({ approval: approval.port })
    await mkdir(join(workspace, '.git', 'hooks'), { recursive: true })
    await symlink(join(workspace, '.git', 'hooks', 'pre-commit'), join(workspace, 'hook'))
    expect(await call('write_file', { path: 'hook', content: '#!/bin/sh\necho pwned\n' })).toMatchObject({ status: 'denied', policy: 'approval' })
    expect(await call('write_file', { path: '.GIT/config', content: 'x', createDirs: true })).toMatchObject({ status: 'denied', policy: 'approval' })
    expect(approval.requests.map((r) => r.reason)).toEqual(['writes inside .git', 'writes inside .git'])
    expect(await readdir(join(workspace, '.git', 'hooks'))).toEqual([])
  })

  it('writes a file whose name is near the 255-byte limit', async () => {
    const { call, workspace } = await workspaceRoot()
    const name = `${'x'.repeat(245)}.md`
    expect(await call('write_file', { path: name, content: 'long\n' })).toMatchObject({ status: 'completed', value: { created: true } })
    expect(await readFile(join(workspace, name), 'utf8')).toBe('long\n')
  })

  it('denies a ../ escape in the guard and writes nothing', async () => {
    const { call, outside, workspace } = await workspaceRoot()
    const outcome = await call('write_file', { path: '../outside/pwned.txt', content: 'x' })
    expect(outcome).toMatchObject({ status: 'denied', code: 'DENIED', policy: 'guard', reason: PATH_ESCAPE_REASON })
    expect(textOf(outcome)).toBe(`The call to "write_file" was denied: ${PATH_ESCAPE_REASON}.`)
    expect(await readdir(outside)).toEqual([])
    expect(await readdir(workspace)).toEqual([])
  })

  it('keeps the guard denial when the user approved the call', async () => {
    const approval = recordingApproval('allowed-once')
    const { call, outside } = await workspaceRoot({ approval: approval.port })
    const outcome = await call('write_file', { path: '../outside/.env', content: 'TOKEN=x' })
    expect(approval.requests).toHaveLength(1)
    expect(outcome).toMatchObject({ status: 'denied', policy: 'guard', reason: PATH_ESCAPE_REASON })
    expect(await readdir(outside)).toEqual([])
  })

  it('denies a write through a symlink that points outside, file or folder, new or existing', async () => {
    const approval = recordingApproval('allowed-session')
    const { call, outside, workspace } = await workspaceRoot({ approval: approval.port })
    await writeFile(join(outside, 'target.txt'), 'keep')
    await symlink(outside, join(workspace, 'docs'))
    await symlink(join(outside, 'target.txt'), join(workspace, 'target-link.txt'))
    for (const path of ['docs/new.txt', 'docs/target.txt', 'target-link.txt', 'docs/a/b.txt']) {
      const outcome = await call('write_file', { path, content: 'x', createDirs: true })
      expect(outcome).toMatchObject({ status: 'denied', policy: 'guard', reason: PATH_ESCAPE_REASON })
    }
    expect(await readdir(outside)).toEqual(['target.txt'])
    expect(await readFile(join(outside, 'target.txt'), 'utf8')).toBe('keep')
  })

  it('tells the model to set createDirs when the folder is missing', async () => {
    const { call } = await workspaceRoot()
    const outcome = await call('write_file', { path: 'missing/file.txt', content: 'x' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect(textOf(outcome)).toContain('missing/file.txt: the folder does not exist; set createDirs: true to create it')
  })

  it('is never concurrency-safe and declares on-risk approval', async () => {
    const { tools, turn } = await workspaceRoot()
    expect(tools.get('write_file')!.isConcurrencySafe!({ path: 'a', content: '', createDirs: false })).toBe(false)
    expect(turn.capabilities.tools.find((t) => t.name === 'write_file')).toMatchObject({ approval: 'on-risk' })
  })
})

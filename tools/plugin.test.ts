import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createRoot, createToken, defineTool } from 'seam-runtime'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { PATH_ESCAPE_REASON } from './lib/confine.js'
import { fsToken, type WorkspaceFs, workspaceRootToken } from './lib/fs-seam.js'
import { PATH_ARGUMENTS } from './lib/guard.js'
import { loadWorkspacePlugin, recordingApproval, tempFolders, workspaceRoot } from './lib/testing.js'

describe('the workspace plugin', () => {
  it('provides the confined filesystem seam at SEAM_WORKSPACE, under a token any bundle can name', async () => {
    const { root, workspace } = await workspaceRoot()
    const resources = root.activeGeneration.root.resources
    expect(resources.get(workspaceRootToken)).toBe(workspace)
    const fs = resources.get(createToken<WorkspaceFs>('workspace-fs'))!
    expect(fs).toBe(resources.get(fsToken))
    expect(fs.confined).toBe(true)
    expect(fs.root).toBe(workspace)
  })

  it('falls back to its own folder when SEAM_WORKSPACE is not set', async () => {
    const { workspace } = await tempFolders()
    const { plugin } = await loadWorkspacePlugin()
    const previous = process.env.SEAM_WORKSPACE
    delete process.env.SEAM_WORKSPACE
    onTestFinished(() => {
      if (previous !== undefined) process.env.SEAM_WORKSPACE = previous
    })
    const root = await createRoot({ plugin: { ...plugin, dir: workspace } })
    onTestFinished(() => root.close())
    expect(root.activeGeneration.root.resources.get(workspaceRootToken)).toBe(workspace)
  })

  it('removes the registration and closes the provider when its scope is disposed', async () => {
    const { root, turn } = await workspaceRoot()
    const first = root.activeGeneration.root
    const fs = first.resources.get(fsToken)!
    expect((await root.reload()).ok).toBe(true)
    const next = root.activeGeneration.root.resources.get(fsToken)!
    expect(next).not.toBe(fs)
    // The open turn still leases generation 1, so its provider keeps serving until the turn ends.
    await expect(fs.resolve('.')).resolves.toBe(fs.root)
    await turn.end()
    await expect.poll(() => first.resources.get(fsToken)).toBeUndefined()
    expect(first.resources.get(workspaceRootToken)).toBeUndefined()
    await expect(fs.resolve('.')).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(next.resolve('.')).resolves.toBe(next.root)
  })

  it('guards and asks under the qualified names when mounted below the root', async () => {
    const approval = recordingApproval('rejected')
    const { turn, workspace } = await workspaceRoot({ mount: 'ws', approval: approval.port })
    await writeFile(join(workspace, 'a.txt'), 'old')
    expect(turn.capabilities.tools.map((t) => t.name).sort()).toEqual(['ws__list_files', 'ws__read_file', 'ws__run_command', 'ws__search_files', 'ws__write_file'])
    const escaping = await turn.tools.execute({ callId: 'c1', name: 'ws__read_file', arguments: { path: '../outside' } })
    expect(escaping).toMatchObject({ status: 'denied', policy: 'guard', reason: PATH_ESCAPE_REASON })
    const overwrite = await turn.tools.execute({ callId: 'c2', name: 'ws__write_file', arguments: { path: 'a.txt', content: 'new' } })
    expect(overwrite).toMatchObject({ status: 'denied', policy: 'approval' })
    expect(approval.requests[0]!.reason).toBe('a.txt exists and would be overwritten')
  })

  it('guards every path argument of every workspace tool', async () => {
    const { tools } = await loadWorkspacePlugin()
    for (const [name, tool] of tools) {
      const keys = Object.keys((tool.input as z.ZodObject).shape).filter((key) => key === 'path' || key === 'cwd')
      expect(PATH_ARGUMENTS[name], name).toEqual(keys)
    }
  })

  it('leaves the paths of other tools alone', async () => {
    const { call } = await workspaceRoot({
      setup: (ctx) => {
        ctx.addTool('echo_path', defineTool({ description: 'Echo.', input: z.object({ path: z.string() }), approval: 'never', execute: ({ path }) => path }))
      },
    })
    expect(await call('echo_path', { path: '../../etc/passwd' })).toMatchObject({ status: 'completed', value: '../../etc/passwd' })
  })

  it('runs read_file, list_files and search_files of one message in parallel', async () => {
    let arrived = 0
    let release!: () => void
    const allStarted = new Promise<void>((resolve) => {
      release = resolve
    })
    const { turn, workspace } = await workspaceRoot({
      setup: (ctx) => {
        // Each body waits until all three have started: run one at a time, they would time out here.
        ctx.hooks.execute(async (_exec, next) => {
          if (++arrived === 3) release()
          const together = await Promise.race([allStarted.then(() => true), new Promise((r) => setTimeout(r, 3000, false))])
          if (!together) return { ok: false, error: 'ran alone' }
          return next()
        })
      },
    })
    await writeFile(join(workspace, 'a.txt'), 'needle\n')
    const outcomes = await turn.tools.executeBatch([
      { callId: 'r', name: 'read_file', arguments: { path: 'a.txt' } },
      { callId: 'l', name: 'list_files', arguments: {} },
      { callId: 's', name: 'search_files', arguments: { pattern: 'needle' } },
    ])
    expect(outcomes.map((o) => [o.callId, o.status])).toEqual([
      ['r', 'completed'],
      ['l', 'completed'],
      ['s', 'completed'],
    ])
  })

  it('keeps a write_file and run_command exclusive in a batch', async () => {
    let running = 0
    let overlapped = false
    const { turn } = await workspaceRoot({
      approval: recordingApproval('allowed-once').port,
      setup: (ctx) => {
        ctx.hooks.execute(async (_exec, next) => {
          if (++running > 1) overlapped = true
          await new Promise((r) => setTimeout(r, 50))
          try {
            return await next()
          } finally {
            running--
          }
        })
      },
    })
    const outcomes = await turn.tools.executeBatch([
      { callId: 'w', name: 'write_file', arguments: { path: 'b.txt', content: 'x' } },
      { callId: 'x', name: 'run_command', arguments: { argv: [process.execPath, '-e', ''] } },
      { callId: 'r', name: 'read_file', arguments: { path: 'b.txt' } },
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed', 'completed'])
    expect(overlapped).toBe(false)
  })
})


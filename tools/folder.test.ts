import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createRoot } from 'seam-runtime'
import { describe, expect, it, onTestFinished } from 'vitest'
import { PATH_ESCAPE_REASON } from './lib/confine.js'
import { copyPlugin, tempFolders, TOOL_NAMES } from './lib/testing.js'

describe('the repository folder as a plugin', () => {
  it('loads with createRoot({ dir }): five tools (and the built-in load_skill), three skills, confined to its own folder', async () => {
    const { workspace: dir, outside } = await tempFolders()
    await copyPlugin(dir)
    const previous = process.env.SEAM_WORKSPACE
    delete process.env.SEAM_WORKSPACE
    onTestFinished(() => {
      if (previous !== undefined) process.env.SEAM_WORKSPACE = previous
    })
    const root = await createRoot({ dir })
    onTestFinished(() => root.close())
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u' } })
    const { tools, skills } = turn.capabilities
    expect(tools.map((t) => [t.name, t.approval]).sort()).toEqual([
      ['list_files', 'never'],
      ['load_skill', 'never'],
      ['read_file', 'never'],
      ['run_command', 'always'],
      ['search_files', 'never'],
      ['write_file', 'on-risk'],
    ])
    expect([...TOOL_NAMES].sort()).toEqual(tools.filter((t) => t.source !== 'builtin:load_skill').map((t) => t.name).sort())
    expect(skills.map((s) => s.name).sort()).toEqual(['edit-safely', 'explore-codebase', 'run-checks'])
    for (const skill of skills) for (const tool of skill.tools) expect(TOOL_NAMES).toContain(tool)

    const written = await turn.tools.execute({ callId: 'c1', name: 'write_file', arguments: { path: 'out/report.md', content: 'ok\n', createDirs: true } })
    expect(written).toMatchObject({ status: 'completed', value: { path: 'out/report.md', created: true } })
    expect(await readFile(join(dir, 'out', 'report.md'), 'utf8')).toBe('ok\n')
    const found = await turn.tools.execute({ callId: 'c2', name: 'search_files', arguments: { pattern: 'defineTool({', glob: '*.ts' } })
    expect((found.value as { matches: { file: string }[] }).matches.map((m) => m.file).sort()).toEqual(TOOL_NAMES.map((n) => `tools/${n}.ts`).sort())
    const escaped = await turn.tools.execute({ callId: 'c3', name: 'write_file', arguments: { path: '../outside/x.md', content: 'no' } })
    expect(escaped).toMatchObject({ status: 'denied', policy: 'guard', reason: PATH_ESCAPE_REASON })
    expect(await readdir(outside)).toEqual([])
    await turn.end()
  })
})

import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { discoverPluginFolder } from './discovery.js'

async function folder(files: string[]): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-discover-')))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  for (const path of files) {
    await mkdir(dirname(join(dir, path)), { recursive: true })
    await writeFile(join(dir, path), '')
  }
  return dir
}

describe('discoverPluginFolder', () => {
  it('lists plugin.ts, the flat tool files and the skill files, sorted', async () => {
    const dir = await folder([
      'plugin.ts',
      'tools/zeta.ts',
      'tools/alpha.mjs',
      'tools/beta.js',
      'tools/lib/helper.ts',
      'tools/nested/deeper/tool.ts',
      'tools/alpha.test.ts',
      'tools/types.d.ts',
      'tools/.alpha.ts.swp',
      'tools/notes.md',
      'agent/skills/triage.md',
      'agent/skills/a-first.md',
      'agent/skills/deep/not-a-skill.md',
      'agent/skills/readme.txt',
    ])
    expect(await discoverPluginFolder(dir)).toEqual({
      pluginFile: join(dir, 'plugin.ts'),
      toolFiles: [join(dir, 'tools/alpha.mjs'), join(dir, 'tools/beta.js'), join(dir, 'tools/zeta.ts')],
      skillFiles: [join(dir, 'agent/skills/a-first.md'), join(dir, 'agent/skills/triage.md')],
      resourceFiles: [],
    })
  })

  it('treats missing folders and a missing plugin file as empty', async () => {
    const dir = await folder([])
    expect(await discoverPluginFolder(dir)).toEqual({ toolFiles: [], skillFiles: [], resourceFiles: [] })
  })

  it('picks the first of plugin.ts, plugin.mts, plugin.js and plugin.mjs', async () => {
    expect((await discoverPluginFolder(await folder(['plugin.mjs', 'plugin.js']))).pluginFile).toMatch(/plugin\.js$/)
    expect((await discoverPluginFolder(await folder(['plugin.mjs']))).pluginFile).toMatch(/plugin\.mjs$/)
  })

  it('follows symlinks that stay inside the folder and ignores those that lead outside it', async () => {
    const outside = await folder(['secret.ts', 'skills/leak.md', 'tools/stolen.ts'])
    const dir = await folder(['shared/inside.ts', 'tools/real.ts'])
    await symlink(join(dir, 'shared/inside.ts'), join(dir, 'tools/linked.ts'))
    await symlink(join(outside, 'secret.ts'), join(dir, 'tools/escape.ts'))
    await symlink(join(outside, 'secret.ts'), join(dir, 'plugin.ts'))
    await mkdir(join(dir, 'agent'))
    await symlink(join(outside, 'skills'), join(dir, 'agent/skills'))
    expect(await discoverPluginFolder(dir)).toEqual({
      toolFiles: [join(dir, 'tools/linked.ts'), join(dir, 'tools/real.ts')],
      skillFiles: [],
      resourceFiles: [],
    })
    const hollow = await folder([])
    await symlink(join(outside, 'tools'), join(hollow, 'tools'))
    expect((await discoverPluginFolder(hollow)).toolFiles).toEqual([])
  })
})

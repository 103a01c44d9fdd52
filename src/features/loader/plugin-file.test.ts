import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import { PLUGIN_BRAND } from '../plugin-types.js'
import { isPluginDefinition, loadPluginFile } from './plugin-file.js'

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-plugin-')))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  for (const [path, text] of Object.entries(files)) await writeFile(join(dir, path), text)
  return dir
}

const modules = {
  'seam-runtime': { definePlugin: (spec: object) => Object.freeze({ ...spec, $seam: PLUGIN_BRAND }) },
}

describe('loadPluginFile', () => {
  it('loads a definePlugin default export with its setup and local imports', async () => {
    const dir = await folder({
      'plugin.ts': `import { definePlugin } from 'seam-runtime'
import { label } from './label'
export default definePlugin({ name: label, setup() { return () => {} } })
`,
      'label.ts': "export const label = 'maps'\n",
    })
    const plugin = await loadPluginFile(join(dir, 'plugin.ts'), { modules })
    expect(plugin.definition.name).toBe('maps')
    expect(typeof plugin.definition.setup).toBe('function')
    expect(plugin.dependencies).toEqual([join(dir, 'label.ts'), join(dir, 'plugin.ts')])
  })

  it('rejects a default export that is not a plugin definition, naming the file', async () => {
    const dir = await folder({ 'plugin.ts': 'export default { setup() {} }\n' })
    const error = await loadPluginFile(join(dir, 'plugin.ts'), { modules, relativeTo: dir }).catch((e: unknown) => e)
    expect(SeamError.is(error, 'INVALID_PLUGIN')).toBe(true)
    expect((error as SeamError).message).toBe(
      "plugin.ts: the default export must be definePlugin({ name, setup }) from 'seam-runtime'; got an object with setup",
    )
    expect((error as SeamError).details).toEqual({ file: join(dir, 'plugin.ts') })
  })

  it('recognises plugin definitions by shape', () => {
    expect(isPluginDefinition({ name: 'a' })).toBe(true)
    expect(isPluginDefinition({ name: 'a', setup() {}, $seam: PLUGIN_BRAND, plugins: [] })).toBe(true)
    expect(isPluginDefinition({ name: '' })).toBe(false)
    expect(isPluginDefinition({ name: 'a', setup: 'no' })).toBe(false)
    expect(isPluginDefinition({ name: 'a', $seam: 'seam-runtime/tool@1' })).toBe(false)
    expect(isPluginDefinition(() => {})).toBe(false)
  })
})

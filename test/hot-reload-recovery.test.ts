import { rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { call, plugin, put, tool, watching } from './hmr-kit.js'

/** A tool whose body returns what `../lib/greet.ts` (outside `tools/`) exports. */
const greeter = `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { greet } from '../lib/greet.js'
export default defineTool({ description: 'Hello.', input: z.object({}), approval: 'never', execute: () => greet() })
`
const helper = (version: string) => `export const greet = () => '${version}'\n`

/** Plugin files that define one tool, `version`, answering `version`. */
const pluginFile = (version: string) => `
import { defineTool, definePlugin } from 'seam-runtime'
import { z } from 'zod'
export default definePlugin({
  name: 'p',
  setup(ctx) {
    ctx.addTool('version', defineTool({ description: 'Version.', input: z.object({}), approval: 'never', execute: () => '${version}' }))
  },
})
`

/** Edits that hot reload used to lose until something else changed. */
describe('hot reload recovers from failed loads and moved folders', () => {
  it.each([
    ['fixed helper outside tools/ after a broken version of it failed to load', (dir: string) => put(dir, 'lib/greet.ts', "export const greet = () => 'v2' +\n")],
    ['helper restored after it was deleted', (dir: string) => rm(path.join(dir, 'lib/greet.ts'))],
  ])('reloads a %s', async (_what, breakHelper) => {
    const dir = await plugin({ 'lib/greet.ts': helper('v1'), 'tools/hello.ts': greeter })
    const { root, next } = await watching(dir)
    let pending = next()
    await breakHelper(dir)
    expect(await pending).toMatchObject({ kind: 'failed' })
    pending = next()
    await put(dir, 'lib/greet.ts', helper('v3'))
    expect(await pending).toMatchObject({ kind: 'generation', generation: 2 })
    expect((await call(root, 'hello')).value).toBe('v3')
  })

  it('keeps a plugin.ts edit that was saved together with a broken tool, once the tool is fixed', async () => {
    const dir = await plugin({ 'plugin.ts': pluginFile('v1'), 'tools/a.ts': tool('A.', "return 'a1'") })
    const { root, next } = await watching(dir)
    let pending = next()
    await put(dir, 'tools/a.ts', tool('A.', "return 'a2' +"))
    await put(dir, 'plugin.ts', pluginFile('v2'))
    expect(await pending).toMatchObject({ kind: 'failed' })
    pending = next()
    await put(dir, 'tools/a.ts', tool('A.', "return 'a3'"))
    const event = await pending
    expect(event).toMatchObject({ kind: 'generation', generation: 2 })
    expect((await call(root, 'version')).value).toBe('v2')
    expect((await call(root, 'a')).value).toBe('a3')
  })

  it('follows tools/ again after the folder is deleted and created anew', async () => {
    const dir = await plugin({ 'tools/a.ts': tool('A.', "return 'a1'") })
    const { root, next } = await watching(dir)
    let pending = next()
    await rm(path.join(dir, 'tools'), { recursive: true })
    expect(await pending).toMatchObject({ kind: 'generation', diff: { tools: { removed: ['a'] } } })
    pending = next()
    await put(dir, 'tools/a.ts', tool('A.', "return 'a2'"))
    expect(await pending).toMatchObject({ kind: 'generation', diff: { tools: { added: ['a'] } } })
    pending = next()
    await put(dir, 'tools/b.ts', tool('B.', "return 'b'"))
    expect(await pending).toMatchObject({ kind: 'generation', diff: { tools: { added: ['b'] } } })
    expect((await call(root, 'b')).value).toBe('b')
  })

  it('publishes a tools/ folder swapped in by rename (a branch switch), then follows edits in it', async () => {
    const dir = await plugin({ 'tools/a.ts': tool('A.', "return 'a1'") })
    const { root, next } = await watching(dir)
    let pending = next()
    await put(dir, 'tools.next/a.ts', tool('A.', "return 'a2'"))
    await rename(path.join(dir, 'tools'), path.join(dir, 'tools.old'))
    await rename(path.join(dir, 'tools.next'), path.join(dir, 'tools'))
    expect(await pending).toMatchObject({ kind: 'generation', generation: 2, diff: { tools: { changed: ['a'] } } })
    expect((await call(root, 'a')).value).toBe('a2')
    pending = next()
    await put(dir, 'tools/b.ts', tool('B.', "return 'b'"))
    expect(await pending).toMatchObject({ kind: 'generation', generation: 3, diff: { tools: { added: ['b'] } } })
  })

  it('notices a plugin file created under any of its names (plugin.mjs)', async () => {
    const dir = await plugin({ 'tools/a.ts': tool('A.', "return 'a1'") })
    const { root, next } = await watching(dir)
    const pending = next()
    await put(dir, 'plugin.mjs', pluginFile('from plugin.mjs'))
    expect(await pending).toMatchObject({ kind: 'generation', diff: { tools: { added: ['version'] } } })
    expect((await call(root, 'version')).value).toBe('from plugin.mjs')
  })
})

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { call, plugin, put, quiet, tool, watching } from './hmr-kit.js'

/** A tool that counts its calls in module state: a reload starts it again from 0. */
const counter = tool('Count.', 'return ++globalThis.__seamUnchangedCalls', 'z.object({})').replace(
  'export default',
  'globalThis.__seamUnchangedCalls = 0\nexport default',
)

/** A plugin file whose setup counts its runs in a global the test reads. */
const pluginFile = `
import { definePlugin } from 'seam-runtime'
export default definePlugin({
  name: 'p',
  setup() {
    globalThis.__seamUnchangedSetups = (globalThis.__seamUnchangedSetups ?? 0) + 1
  },
})
`
const setups = () => (globalThis as { __seamUnchangedSetups?: number }).__seamUnchangedSetups ?? 0

/** Saves that change nothing: editors re-saving a file, and the second event a write can raise. */
describe('hot reload of saves without an edit', () => {
  it('publishes nothing for a tool, a skill and plugin.ts saved unchanged: no setup runs, the tool keeps its module state', async () => {
    const files = { 'plugin.ts': pluginFile, 'tools/count.ts': counter, 'agent/skills/notes.md': '---\ndescription: Notes.\n---\nbody\n' }
    const dir = await plugin(files)
    const { root, events, next } = await watching(dir)
    const setupsBefore = setups()
    expect((await call(root, 'count')).value).toBe(1)
    for (const name of Object.keys(files)) await put(dir, name, await readFile(path.join(dir, name), 'utf8'))
    await quiet()
    await quiet()
    expect(events).toEqual([])
    expect(setups()).toBe(setupsBefore)
    expect((await call(root, 'count')).value).toBe(2)

    // A real edit after them publishes generation 2 with only that change.
    const pending = next()
    await put(dir, 'tools/other.ts', tool('Other.', "return 'o'"))
    expect(await pending).toMatchObject({ kind: 'generation', generation: 2, diff: { tools: { added: ['other'], changed: [], removed: [] }, skills: { added: [], changed: [], removed: [] } } })
    expect(setups()).toBe(setupsBefore)
    expect((await call(root, 'count')).value).toBe(3)
  })

  it('reports a broken file once while it is saved again unchanged, and publishes it restored to its last good content', async () => {
    const dir = await plugin({ 'tools/count.ts': counter })
    const { root, events, next } = await watching(dir)
    expect((await call(root, 'count')).value).toBe(1)
    let pending = next()
    await put(dir, 'tools/count.ts', `${counter}\nexport const broken = (`)
    expect(await pending).toMatchObject({ kind: 'failed' })
    await put(dir, 'tools/count.ts', `${counter}\nexport const broken = (`)
    await quiet()
    await quiet()
    expect(events.map((e) => e.kind)).toEqual(['failed'])

    // Back to what generation 1 loaded: a generation says the failure is over, and nothing changed.
    pending = next()
    await put(dir, 'tools/count.ts', counter)
    expect(await pending).toMatchObject({ kind: 'generation', generation: 2, diff: { tools: { added: [], changed: [], removed: [] } } })
    expect((await call(root, 'count')).value).toBe(2)

    // A real edit still reloads the file.
    pending = next()
    await put(dir, 'tools/count.ts', counter.replace('"Count."', '"Count again."'))
    expect(await pending).toMatchObject({ kind: 'generation', generation: 3, diff: { tools: { changed: ['count'] } } })
    expect((await call(root, 'count')).value).toBe(1)
  })

  it('runs setup again when plugin.ts really changes', async () => {
    const dir = await plugin({ 'plugin.ts': pluginFile })
    const { next } = await watching(dir)
    const setupsBefore = setups()
    const pending = next()
    await put(dir, 'plugin.ts', `${pluginFile}\n// edited\n`)
    expect(await pending).toMatchObject({ kind: 'generation', generation: 2 })
    expect(setups()).toBe(setupsBefore + 1)
  })
})

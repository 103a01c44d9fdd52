import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createRoot, definePlugin, memoryJournal, type Root, SeamError } from 'seam-runtime'
import { describe, expect, it, onTestFinished } from 'vitest'
import { put } from './hmr-kit.js'
import { beginTurn } from './kit.js'

const ROUTE_TOOL = `import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'Route between two places.',
  input: z.object({ from: z.string(), to: z.string() }),
  approval: 'never',
  execute: ({ from, to }) => \`\${from} → \${to}\`,
})
`

/** The folder's own plugin.ts: a programmatic tool, and a log line from setup. */
const mapsPlugin = (greeting: string) => `import { defineTool } from 'seam-runtime'
import { definePlugin } from 'seam-runtime/plugin-runtime'
export default definePlugin({
  name: 'maps-folder',
  setup(ctx) {
    ctx.log.info('maps setup ran as ' + ctx.owner)
    ctx.addTool('hello', defineTool({ description: 'Say hello.', input: { type: 'object' }, approval: 'never', execute: () => ${JSON.stringify(greeting)} }))
  },
})
`

const SKILL = `---
description: Plan a route.
---
# Routes
`

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-nested-'))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) await put(dir, name, text)
  return dir
}

async function call(root: Root, name: string, args: object) {
  const turn = await beginTurn(root)
  try {
    return await turn.tools.execute({ callId: 'c1', name, arguments: JSON.stringify(args) })
  } finally {
    await turn.end()
  }
}

describe('nested plugin folders load as a root folder does', () => {
  it("loads a child's folder (tools, skills, its own plugin.ts) when the root has no folder", async () => {
    const maps = await folder({ 'tools/route.ts': ROUTE_TOOL, 'agent/skills/routes.md': SKILL, 'plugin.ts': mapsPlugin('hi from maps') })
    const logs: string[] = []
    const root = await createRoot({
      plugin: definePlugin({ name: 'app', plugins: [definePlugin({ name: 'maps', dir: maps })] }),
      journal: memoryJournal(),
      log: (_level, scope, message) => logs.push(`[${scope}] ${message}`),
    })
    onTestFinished(() => root.close())
    const capabilities = await root.capabilities()
    expect(capabilities.tools.map((t) => t.name).sort()).toEqual(['load_skill', 'maps__hello', 'maps__route'])
    expect(capabilities.skills.map((s) => s.name)).toEqual(['maps__routes'])
    expect(await call(root, 'maps__route', { from: 'A', to: 'B' })).toMatchObject({ status: 'completed', value: 'A → B' })
    expect(await call(root, 'maps__hello', {})).toMatchObject({ status: 'completed', value: 'hi from maps' })
    expect(logs).toContain('[app/maps] maps setup ran as root/maps')
  })

  it("runs a child folder's plugin.ts under a root folder, a relative dir resolved against the root's folder", async () => {
    const dir = await folder({
      'plugin.ts': `import { definePlugin } from 'seam-runtime/plugin-runtime'
export default definePlugin({ name: 'app', plugins: [definePlugin({ name: 'maps', dir: './vendor/maps' })] })
`,
      'vendor/maps/plugin.ts': mapsPlugin('hi'),
      'vendor/maps/tools/route.ts': ROUTE_TOOL,
    })
    const root = await createRoot({ dir, journal: memoryJournal() })
    onTestFinished(() => root.close())
    const tools = (await root.capabilities()).tools.map((t) => t.name).sort()
    expect(tools).toEqual(['maps__hello', 'maps__route'])
  })

  it('refuses a child that declares setup while its folder has a plugin.ts of its own', async () => {
    const maps = await folder({ 'plugin.ts': mapsPlugin('hi'), 'tools/route.ts': ROUTE_TOOL })
    const plugin = definePlugin({ name: 'app', plugins: [definePlugin({ name: 'maps', dir: maps, setup: () => {} })] })
    const error = await createRoot({ plugin, journal: memoryJournal() }).then(
      async (root) => {
        await root.close()
        throw new Error('createRoot succeeded')
      },
      (e: unknown) => e,
    )
    expect(SeamError.is(error, 'RELOAD_FAILED')).toBe(true)
    expect((error as Error).message).toContain(`plugin "app/maps" declares setup, and its folder has a plugin.ts of its own (${path.join(maps, 'plugin.ts')})`)
  })

  it("publishes a new generation when a child folder's plugin.ts changes, running its setup again", async () => {
    const dir = await folder({
      'plugin.ts': `import { definePlugin } from 'seam-runtime/plugin-runtime'
export default definePlugin({ name: 'app', plugins: [definePlugin({ name: 'maps', dir: './maps' })] })
`,
      'maps/plugin.ts': mapsPlugin('before'),
    })
    const root = await createRoot({ dir, watch: true, debounceMs: 20, journal: memoryJournal() })
    onTestFinished(() => root.close())
    expect(await call(root, 'maps__hello', {})).toMatchObject({ value: 'before' })
    const published = new Promise<{ changed: string[] }>((resolve) => root.on('generation', (e) => resolve(e.diff.tools)))
    await put(dir, 'maps/plugin.ts', mapsPlugin('after'))
    expect((await published).changed).toEqual(['maps__hello'])
    expect(await call(root, 'maps__hello', {})).toMatchObject({ value: 'after' })
  })
})

import { rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { GenerationEvent, ReloadFailedEvent } from 'seam-runtime'
import { beginTurn, deferred } from './kit.js'
import { call, plugin, put, quiet, tool, watching } from './hmr-kit.js'

describe('hot reload of a plugin folder', () => {
  it('publishes one generation per add, change, rename and delete of a tool file, with the diff', async () => {
    const dir = await plugin({ 'tools/alpha.ts': tool('Alpha.', "return 'a1'") })
    const { root, events, next } = await watching(dir)
    expect(root.generation).toBe(1)
    expect((await call(root, 'alpha')).value).toBe('a1')

    let pending = next()
    await put(dir, 'tools/beta.ts', tool('Beta.', "return 'b1'"))
    expect(await pending).toMatchObject({ kind: 'generation', generation: 2, diff: { tools: { added: ['beta'], changed: [], removed: [] } } })

    pending = next()
    await put(dir, 'tools/alpha.ts', tool('Alpha.', "return 'a2'"))
    expect(await pending).toMatchObject({ generation: 3, diff: { tools: { added: [], changed: ['alpha'], removed: [] } } })
    expect((await call(root, 'alpha')).value).toBe('a2')

    pending = next()
    await rename(path.join(dir, 'tools/beta.ts'), path.join(dir, 'tools/gamma.ts'))
    expect(await pending).toMatchObject({ generation: 4, diff: { tools: { added: ['gamma'], changed: [], removed: ['beta'] } } })

    pending = next()
    await rm(path.join(dir, 'tools/gamma.ts'))
    expect(await pending).toMatchObject({ generation: 5, diff: { tools: { added: [], changed: [], removed: ['gamma'] } } })
    await quiet()
    expect(events.map((e) => e.kind === 'generation' && e.generation)).toEqual([2, 3, 4, 5])
  })

  it('reloads exactly the tools that import a changed helper', async () => {
    const uses = (name: string) => `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { greet } from './lib/greet.js'
export default defineTool({ description: '${name}', input: z.object({}), approval: 'never', execute: () => greet('${name}') })
`
    const dir = await plugin({
      'tools/lib/greet.ts': "export const greet = (n: string) => 'hello ' + n\n",
      'tools/one.ts': uses('one'),
      'tools/two.ts': uses('two'),
      'tools/three.ts': tool('Three.', "return 'three'"),
    })
    const { root, next } = await watching(dir)
    const pending = next()
    await put(dir, 'tools/lib/greet.ts', "export const greet = (n: string) => 'hi ' + n\n")
    const event = await pending
    expect(event).toMatchObject({ kind: 'generation', diff: { tools: { added: [], removed: [] } } })
    expect((event as GenerationEvent).diff.tools.changed.sort()).toEqual(['one', 'two'])
    expect((await call(root, 'two')).value).toBe('hi two')
  })

  it('publishes a skill front matter change as a changed skill', async () => {
    const dir = await plugin({ 'agent/skills/triage.md': '---\ndescription: Triage tickets.\n---\n# Triage\nRead the ticket.\n' })
    const { root, next } = await watching(dir)
    const pending = next()
    await put(dir, 'agent/skills/triage.md', '---\ndescription: Triage support tickets.\ntools: [lookup]\n---\n# Triage\nRead the ticket.\n')
    expect(await pending).toMatchObject({ kind: 'generation', diff: { skills: { changed: ['triage'] }, tools: { changed: [] } } })
    const caps = await root.capabilities()
    expect(caps.skills[0]).toMatchObject({ name: 'triage', description: 'Triage support tickets.', tools: ['lookup'] })
  })

  it.each([
    ['a syntax error', 'tools/alpha.ts', "import { defineTool } from 'seam-runtime'\nexport default defineTool({\n  description: 'x',,\n})\n", 3],
    ['a default export that is not a tool', 'tools/alpha.ts', 'export default function alpha() {}\n', undefined],
    ['malformed YAML front matter', 'agent/skills/notes.md', '---\ndescription: ok\nname: : bad\n---\nbody\n', 3],
  ])('rolls back %s, reports it, keeps serving, and publishes the fix', async (_what, file, broken, line) => {
    const dir = await plugin({ 'tools/alpha.ts': tool('Alpha.', "return 'a1'") })
    const { root, next } = await watching(dir)
    let pending = next()
    await put(dir, file, broken)
    const failed = await pending
    expect(failed.kind).toBe('failed')
    const diagnostic = (failed as ReloadFailedEvent).diagnostics[0]!
    expect(diagnostic.file).toBe(path.join(dir, file))
    if (line !== undefined) {
      expect(diagnostic.line).toBe(line)
      expect(diagnostic.frame).toContain('|')
    }
    expect(root.generation).toBe(1)
    expect((await call(root, 'alpha')).value).toBe('a1')
    pending = next()
    await put(dir, file, file.endsWith('.md') ? '---\ndescription: Notes.\n---\nbody\n' : tool('Alpha.', "return 'fixed'"))
    expect(await pending).toMatchObject({ kind: 'generation', generation: 2 })
    if (!file.endsWith('.md')) expect((await call(root, 'alpha')).value).toBe('fixed')
  })

  it('rolls back a tool file whose name clashes with a seam provider tool', async () => {
    const dir = await plugin({
      'plugin.ts': `
import { SeamIntegration, capabilitySeamToken, definePlugin } from 'seam-runtime'
export default definePlugin({
  name: 'host',
  setup({ resources }) {
    const seams = new SeamIntegration()
    seams.registerToolService('global', {
      id: 'remote', description: 'remote',
      schema: () => [{ type: 'function', function: { name: 'lookup', description: 'Remote lookup.', parameters: { type: 'object' } }, approval: 'never' }],
      execute: async () => ({ success: true, output: 'remote' }),
    })
    resources.provide(capabilitySeamToken, seams, () => seams.dispose())
  },
})
`,
    })
    const { root, next } = await watching(dir)
    const pending = next()
    await put(dir, 'tools/lookup.ts', tool('Local lookup.', "return 'local'"))
    const failed = (await pending) as ReloadFailedEvent & { kind: string }
    expect(failed.kind).toBe('failed')
    expect(failed.diagnostics[0]?.message).toMatch(/duplicate tool name "lookup".*tools\/lookup\.ts.*seam:remote|duplicate tool name "lookup".*seam:remote.*tools\/lookup\.ts/)
    expect((await call(root, 'lookup')).value).toBe('remote')
  })

  it('finishes an in-flight call on the old code and runs the next call on the new code', async () => {
    const dir = await plugin({ 'tools/slow.ts': tool('Slow.', "await new Promise((r) => setTimeout(r, 300)); return 'old'") })
    const { root, next } = await watching(dir)
    const turn = await beginTurn(root)
    const inFlight = turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    const pending = next()
    await put(dir, 'tools/slow.ts', tool('Slow.', "return 'new'"))
    await pending
    expect(root.generation).toBe(2)
    expect((await inFlight).value).toBe('old')
    expect(turn.generation).toBe(1)
    await turn.end()
    expect((await call(root, 'slow')).value).toBe('new')
  })

  it('replaces a ToolService when plugin.ts changes, disposing the old one after its last lease', async () => {
    const pluginFile = (version: string) => `
import { SeamIntegration, capabilitySeamToken, definePlugin } from 'seam-runtime'
export default definePlugin({
  name: 'host',
  setup({ resources }) {
    const seams = new SeamIntegration()
    seams.registerToolService('global', {
      id: 'remote', description: 'remote',
      schema: () => [{ type: 'function', function: { name: 'version', description: 'Which provider.', parameters: { type: 'object' } }, approval: 'never' }],
      execute: async () => ({ success: true, output: '${version}' }),
    })
    resources.provide(capabilitySeamToken, seams, () => {
      seams.dispose()
      ;(globalThis as any).__seamDisposed = [...((globalThis as any).__seamDisposed ?? []), '${version}']
    })
  },
})
`
    const g = globalThis as { __seamDisposed?: string[] }
    g.__seamDisposed = []
    const dir = await plugin({ 'plugin.ts': pluginFile('v1') })
    const { root, next } = await watching(dir)
    const turn = await beginTurn(root)
    const pending = next()
    await put(dir, 'plugin.ts', pluginFile('v2'))
    expect(await pending).toMatchObject({ kind: 'generation', generation: 2 })
    expect((await call(root, 'version')).value).toBe('v2')
    expect((await turn.tools.execute({ callId: 'c1', name: 'version', arguments: '{}' })).value).toBe('v1')
    expect(g.__seamDisposed).toEqual([])
    await turn.end()
    await new Promise((r) => setTimeout(r, 20))
    expect(g.__seamDisposed).toEqual(['v1'])
  })

  it('reports the original .ts file and line of a throw inside a tool', async () => {
    const dir = await plugin({
      'tools/boom.ts': `import { defineTool } from 'seam-runtime'
import { z } from 'zod'

type Unused = { a: string }

export default defineTool({
  description: 'Throws.',
  input: z.object({}),
  approval: 'never',
  execute() {
    throw new Error('kaboom')
  },
})
`,
    })
    const { root } = await watching(dir)
    const outcome = await call(root, 'boom')
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR', details: { file: path.join(dir, 'tools/boom.ts'), line: 11 } })
  })

  it('keeps generation 1 alive for a turn and disposes it when the turn ends', async () => {
    const dir = await plugin({ 'tools/alpha.ts': tool('Alpha.', "return 'a1'") })
    const { root, next } = await watching(dir)
    const turn = await beginTurn(root)
    const gen1 = root.activeGeneration
    const pending = next()
    await put(dir, 'tools/alpha.ts', tool('Alpha.', "return 'a2'"))
    await pending
    expect(gen1.state).toBe('retired')
    const disposed = deferred()
    void gen1.whenDisposed.then(() => disposed.resolve())
    await turn.end()
    await disposed.promise
    expect(gen1.state).toBe('disposed')
  })
})

import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { z } from 'zod'
import { SeamError } from '../src/errors.js'
import { defineTool } from '../src/features/define-tool.js'
import { memoryJournal } from '../src/runtime/journal/memory.js'
import type { PluginContext } from '../src/features/plugin-types.js'
import { definePlugin } from '../src/runtime/plugins/plugin.js'
import { createRoot } from '../src/index.js'
import type { Root, RootOptions } from '../src/runtime/root.js'
import type { GenerationEvent, ReloadFailedEvent } from '../src/runtime/generations/instrumentation.js'

const principal = { subjectId: 'u1', roles: [] }

/** A root over one plugin named `root`; closed when the test finishes. */
async function rootWith(setup: (ctx: PluginContext) => void | Promise<void>, options: Partial<RootOptions> = {}): Promise<Root> {
  const root = await createRoot({ plugin: definePlugin({ name: 'root', setup }), ...options })
  onTestFinished(() => root.close())
  return root
}

const versionTool = (n: number) =>
  defineTool({ description: 'Which generation built me.', input: z.object({}), approval: 'never', execute: () => n })

async function callVersion(root: Root): Promise<unknown> {
  const turn = await root.beginTurn({ session: 's', principal })
  try {
    return (await turn.tools.execute({ callId: 'v', name: 'version', arguments: '{}' })).value
  } finally {
    await turn.end()
  }
}

function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe('createRoot', () => {
  it('builds generation 1 from the root plugin and marks it active', async () => {
    const setup = vi.fn()
    const root = await rootWith(setup)
    expect(root.generation).toBe(1)
    expect(root.activeGeneration.number).toBe(1)
    expect(root.activeGeneration.state).toBe('active')
    expect(setup).toHaveBeenCalledTimes(1)
    expect(setup.mock.calls[0]?.[0]).toMatchObject({ owner: 'root', generation: 1 })
  })

  it('needs a plugin or a dir', async () => {
    await expect(createRoot({})).rejects.toMatchObject({ code: 'INVALID_PLUGIN', message: 'createRoot needs a `plugin` or a `dir`' })
  })

  it('rejects with RELOAD_FAILED when the first generation cannot be built, after rolling back its setup', async () => {
    const log: string[] = []
    const journal = memoryJournal()
    const error = await createRoot({
      journal,
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.effect(() => log.push('rolled back'), 'effect')
          throw new Error('no config')
        },
      }),
    }).catch((e: unknown) => e)
    expect(SeamError.is(error, 'RELOAD_FAILED')).toBe(true)
    expect((error as SeamError).message).toContain('plugin "root" failed to set up: no config')
    expect(SeamError.is((error as SeamError).cause, 'SETUP_FAILED')).toBe(true)
    expect(log).toEqual(['rolled back'])
    await expect(journal.append({ kind: 'turn/begin', turnId: 't', seq: 1, at: 0 } as never)).rejects.toThrow()
  })
})

describe('Root.reload', () => {
  it('publishes generation N+1 by re-running setup and emits a generation event with the diff', async () => {
    let withExtra = false
    const root = await rootWith((ctx) => {
      ctx.addTool('version', versionTool(ctx.generation))
      if (withExtra) ctx.addTool('extra', versionTool(0))
    })
    const events: GenerationEvent[] = []
    root.on('generation', (event) => events.push(event))
    withExtra = true
    const result = await root.reload()
    expect(result).toMatchObject({ ok: true, generation: 2, diff: { tools: { added: ['extra'], changed: ['version'], removed: [] } } })
    expect(events.map((e) => e.generation)).toEqual([2])
    expect(root.generation).toBe(2)
    expect(await callVersion(root)).toBe(2)
  })

  it('reuses the mounted plugin tree without re-running setup when setup is false', async () => {
    const setup = vi.fn((ctx: PluginContext) => void ctx.addTool('version', versionTool(ctx.generation)))
    const root = await rootWith(setup)
    const first = root.activeGeneration
    const result = await root.reload({ setup: false })
    expect(result.ok).toBe(true)
    expect(root.generation).toBe(2)
    expect(setup).toHaveBeenCalledTimes(1)
    expect(root.activeGeneration.root).toBe(first.root)
    expect(first.state).toBe('disposed')
    expect(await callVersion(root)).toBe(1)
  })

  it('rolls back a reload whose setup throws: ok false, a reload-failed event, the active generation unchanged and serving', async () => {
    let fail = false
    const root = await rootWith((ctx) => {
      ctx.addTool('version', versionTool(ctx.generation))
      if (fail) throw new Error('syntax error in config')
    })
    const active = root.activeGeneration
    const failures: ReloadFailedEvent[] = []
    const published: GenerationEvent[] = []
    root.on('reload-failed', (event) => failures.push(event))
    root.on('generation', (event) => published.push(event))
    fail = true
    const result = await root.reload()
    expect(result.ok).toBe(false)
    expect(result).toMatchObject({ error: { code: 'SETUP_FAILED' }, diagnostics: [{ code: 'SETUP_FAILED', message: expect.stringContaining('syntax error in config') }] })
    expect(failures).toHaveLength(1)
    expect(failures[0]?.error.code).toBe('SETUP_FAILED')
    expect(published).toEqual([])
    expect(root.activeGeneration).toBe(active)
    expect(active.state).toBe('active')
    expect(await callVersion(root)).toBe(1)
  })

  it('numbers generations without gaps after a failed reload', async () => {
    let fail = false
    const root = await rootWith(() => {
      if (fail) throw new Error('broken')
    })
    fail = true
    expect((await root.reload()).ok).toBe(false)
    fail = false
    expect(await root.reload()).toMatchObject({ ok: true, generation: 2 })
  })

  it('serialises concurrent reloads, publishing each in order', async () => {
    const root = await rootWith((ctx) => void ctx.addTool('version', versionTool(ctx.generation)))
    const results = await Promise.all([root.reload(), root.reload(), root.reload()])
    expect(results.map((r) => (r.ok ? r.generation : 0))).toEqual([2, 3, 4])
    expect(await callVersion(root)).toBe(4)
  })

  it('keeps publishing when a listener throws, and stops calling a listener once its disposer ran', async () => {
    const root = await rootWith(() => {})
    const seen: number[] = []
    root.on('generation', () => {
      throw new Error('listener bug')
    })
    const off = root.on('generation', (e) => seen.push(e.generation))
    expect((await root.reload()).ok).toBe(true)
    off()
    expect((await root.reload()).ok).toBe(true)
    expect(seen).toEqual([2])
    expect(root.generation).toBe(3)
  })
})

describe('Root.beginTurn', () => {
  it('leases the active generation and journals turn/begin and turn/end', async () => {
    const journal = memoryJournal()
    const root = await rootWith(() => {}, { journal })
    const turn = await root.beginTurn({ session: 's', principal, turnId: 't-1' })
    expect(turn.generation).toBe(1)
    expect(root.activeGeneration.leases).toBe(1)
    await turn.end()
    await turn.end()
    expect(root.activeGeneration.leases).toBe(0)
    expect((await journal.read('t-1')).map((e) => e.kind)).toEqual(['turn/begin', 'turn/end'])
  })

  it('rejects an invalid envelope with INVALID_TURN and releases the lease it took', async () => {
    const root = await rootWith(() => {})
    await expect(root.beginTurn({ session: ' ', principal })).rejects.toMatchObject({ code: 'INVALID_TURN' })
    await expect(
      root.beginTurn({ session: 's', principal, unattended: true, ports: { question: { ask: async () => 'x' } } }),
    ).rejects.toMatchObject({ code: 'INVALID_TURN', message: expect.stringContaining('unattended') })
    expect(root.activeGeneration.leases).toBe(0)
  })

  it('gives an unattended turn no approval port even when the root has a default one', async () => {
    const root = await rootWith(() => {}, { approval: { request: async () => 'allowed-once' } })
    const unattended = await root.beginTurn({ session: 's', principal, unattended: true })
    const attended = await root.beginTurn({ session: 's', principal })
    onTestFinished(async () => {
      await Promise.all([unattended.end(), attended.end()])
    })
    expect(unattended.envelope.ports.approval).toBeUndefined()
    expect(attended.envelope.ports.approval).toBeDefined()
  })
})

describe('Root.close', () => {
  it('is idempotent, returning the same promise, and disposes the active generation plugins', async () => {
    const log: string[] = []
    const journal = memoryJournal()
    const root = await createRoot({ journal, plugin: definePlugin({ name: 'root', setup: (ctx) => void ctx.effect(() => log.push('disposed'), 'e') }) })
    onTestFinished(() => root.close())
    const generation = root.activeGeneration
    const first = root.close()
    expect(root.close()).toBe(first)
    await first
    await root.close()
    expect(root.closed).toBe(true)
    expect(log).toEqual(['disposed'])
    expect(generation.state).toBe('disposed')
  })

  it('supports `await using`', async () => {
    const log: string[] = []
    let escaped: Root | undefined
    {
      await using root = await createRoot({ plugin: definePlugin({ name: 'root', setup: (ctx) => void ctx.effect(() => log.push('disposed'), 'e') }) })
      escaped = root
      expect(root.closed).toBe(false)
    }
    expect(escaped.closed).toBe(true)
    expect(log).toEqual(['disposed'])
  })

  it('fails later calls fast with a CLOSED SeamError', async () => {
    const root = await createRoot({ plugin: definePlugin({ name: 'root' }) })
    onTestFinished(() => root.close())
    await root.close()
    await expect(root.beginTurn({ session: 's', principal })).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(root.reload()).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(root.capabilities()).rejects.toMatchObject({ code: 'CLOSED' })
    expect(() => root.activeGeneration).toThrowError(expect.objectContaining({ code: 'CLOSED' }))
  })

  it('lets a reload in progress publish before closing, and answers a reload still queued with CLOSED', async () => {
    const entered = deferred()
    const gate = deferred()
    let calls = 0
    const root = await createRoot({
      plugin: definePlugin({
        name: 'root',
        async setup() {
          if (++calls !== 2) return
          entered.resolve()
          await gate.promise
        },
      }),
    })
    onTestFinished(() => {
      gate.resolve()
      return root.close()
    })
    const inProgress = root.reload()
    await entered.promise
    const queued = root.reload()
    const closing = root.close()
    let closed = false
    void closing.then(() => {
      closed = true
    })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(closed).toBe(false)
    gate.resolve()
    expect(await inProgress).toMatchObject({ ok: true, generation: 2 })
    expect(await queued).toMatchObject({ ok: false, error: { code: 'CLOSED' } })
    await closing
    expect(closed).toBe(true)
    expect(calls).toBe(2)
  })

  it('waits for a running call to settle before disposing its generation', async () => {
    const log: string[] = []
    const gate = deferred()
    const root = await createRoot({
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.effect(() => log.push('disposed'), 'effect')
          ctx.addTool(
            'slow',
            defineTool({
              description: 'Waits for the test.',
              input: z.object({}),
              approval: 'never',
              async execute() {
                await gate.promise
                log.push('body settled')
                return 'done'
              },
            }),
          )
        },
      }),
    })
    onTestFinished(() => {
      gate.resolve()
      return root.close()
    })
    const turn = await root.beginTurn({ session: 's', principal })
    const running = turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const closing = root.close()
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(log).toEqual([])
    gate.resolve()
    await closing
    expect((await running).status).toBe('completed')
    expect(log).toEqual(['body settled', 'disposed'])
  })

  it('rejects a turn begun while the root closes with CLOSED, ending it rather than holding close up', async () => {
    const journal = memoryJournal()
    const root = await createRoot({ journal, plugin: definePlugin({ name: 'root' }), defaults: { graceMs: 10_000 } })
    onTestFinished(() => root.close())
    const generation = root.activeGeneration
    const started = performance.now()
    const beginning = root.beginTurn({ session: 's', principal, turnId: 'racing' })
    const closing = root.close()
    await expect(beginning).rejects.toMatchObject({ code: 'CLOSED', message: 'the root closed while this turn was beginning' })
    await closing
    // Well inside the 10 s grace a waiting close would have taken.
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(generation.state).toBe('disposed')
    expect((await journal.read('racing')).map((e) => e.kind)).toEqual(['turn/begin', 'turn/end'])
  })

  it('ends the turns still open, releasing their leases, and journals their turn/end', async () => {
    const journal = memoryJournal()
    const root = await createRoot({ journal, plugin: definePlugin({ name: 'root' }) })
    onTestFinished(() => root.close())
    const generation = root.activeGeneration
    const turn = await root.beginTurn({ session: 's', principal, turnId: 'open' })
    await root.close()
    expect(turn.ended).toBe(true)
    expect(generation.leases).toBe(0)
    expect(generation.state).toBe('disposed')
    expect((await journal.read('open')).map((e) => e.kind)).toEqual(['turn/begin', 'turn/end'])
  })
})

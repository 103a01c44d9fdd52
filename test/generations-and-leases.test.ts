import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { z } from 'zod'
import {
  SeamIntegration,
  TurnToolRuntime,
  capabilitySeamToken,
  createRoot,
  createTurnIngress,
  definePlugin,
  defineTool,
  memoryJournal,
  type PluginContext,
  type Root,
  type RootOptions,
  type ToolExecutionResult,
  type ToolService,
} from 'seam-runtime'

const principal = { subjectId: 'u1', roles: [] }

/** A provider whose execute body says which generation registered it. */
function versionedService(generation: number, calls: string[]) {
  const execute = vi.fn(async (): Promise<ToolExecutionResult> => {
    calls.push(`remote ${generation}`)
    return { success: true, output: `remote v${generation}` }
  })
  const service: ToolService = {
    id: 'remote',
    description: 'A remote provider',
    schema: () => [{ type: 'function', function: { name: 'remote_version', description: 'Which generation.', parameters: { type: 'object' } }, approval: 'never' }],
    execute,
  }
  return { service, execute }
}

/**
 * A root whose setup registers, per generation, a Feature tool `version` and a Seam tool
 * `remote_version` whose bodies name their generation, and an effect logging its disposal.
 */
async function versionedRoot(log: string[], options: Partial<RootOptions> & { extra?: (ctx: PluginContext) => void } = {}) {
  const providers = new Map<number, ReturnType<typeof versionedService>>()
  const root = await createRoot({
    ...options,
    plugin: definePlugin({
      name: 'root',
      setup(ctx) {
        const n = ctx.generation
        ctx.addTool(
          'version',
          defineTool({
            description: 'Which generation built me.',
            input: z.object({}),
            approval: 'never',
            execute: () => {
              log.push(`body ${n}`)
              return `v${n}`
            },
          }),
        )
        const seams = new SeamIntegration()
        const provider = versionedService(n, log)
        providers.set(n, provider)
        seams.registerToolService('global', provider.service)
        ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
        ctx.effect(() => log.push(`dispose ${n}`), `generation ${n} effect`)
        options.extra?.(ctx)
      },
    }),
  })
  onTestFinished(() => root.close())
  return { root, providers }
}

const begin = (root: Root, turnId?: string) => root.beginTurn({ session: 's', principal, turnId })
const call = (name: string, callId = 'c1') => ({ callId, name, arguments: '{}' })

describe('generations and leases', () => {
  it('finishes a turn begun on generation N on N tools while a new turn sees N+1', async () => {
    const log: string[] = []
    const { root } = await versionedRoot(log)
    await using first = await begin(root)
    expect((await root.reload()).ok).toBe(true)
    await using second = await begin(root)
    expect([first.generation, second.generation]).toEqual([1, 2])
    expect(first.capabilities.generation).toBe(1)
    expect(second.capabilities.generation).toBe(2)
    const [oldFeature, newFeature] = await Promise.all([first.tools.execute(call('version')), second.tools.execute(call('version'))])
    expect([oldFeature.value, oldFeature.generation, newFeature.value, newFeature.generation]).toEqual(['v1', 1, 'v2', 2])
    const [oldSeam, newSeam] = await Promise.all([first.tools.execute(call('remote_version', 'c2')), second.tools.execute(call('remote_version', 'c2'))])
    expect([oldSeam.value, newSeam.value]).toEqual(['remote v1', 'remote v2'])
  })

  it("disposes N's plugins only after the last turn leasing N ends, in LIFO order", async () => {
    const log: string[] = []
    const { root } = await versionedRoot(log, {
      extra: (ctx) => void ctx.effect(() => log.push(`dispose ${ctx.generation} (registered last)`), 'last'),
    })
    const generation1 = root.activeGeneration
    const a = await begin(root)
    const b = await begin(root)
    await root.reload()
    log.push('reloaded')
    await a.tools.execute(call('version'))
    log.push('ending a')
    await a.end()
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(generation1.state).toBe('retired')
    await b.tools.execute(call('version'))
    log.push('ending b')
    await b.end()
    await generation1.whenDisposed
    expect(generation1.state).toBe('disposed')
    expect(log).toEqual(['reloaded', 'body 1', 'ending a', 'body 1', 'ending b', 'dispose 1 (registered last)', 'dispose 1'])
  })

  it('disposes the previous generation at once when no turn leases it', async () => {
    const log: string[] = []
    const { root } = await versionedRoot(log)
    const generation1 = root.activeGeneration
    await root.reload()
    await generation1.whenDisposed
    expect(log).toEqual(['dispose 1'])
    expect(root.activeGeneration.state).toBe('active')
  })

  it('keeps the active generation and open turns serving when a reload rolls back', async () => {
    const log: string[] = []
    let fail = false
    const { root } = await versionedRoot(log, {
      extra: () => {
        if (fail) throw new Error('broken setup')
      },
    })
    await using turn = await begin(root)
    fail = true
    const failed: unknown[] = []
    root.on('reload-failed', (event) => failed.push(event.error.code))
    const result = await root.reload()
    expect(result.ok).toBe(false)
    expect(failed).toEqual(['SETUP_FAILED'])
    // The candidate's effects ran (rolled back); generation 1 was not touched.
    expect(log).toEqual(['dispose 2'])
    expect(root.generation).toBe(1)
    expect((await turn.tools.execute(call('version'))).value).toBe('v1')
    await using fresh = await begin(root)
    expect(fresh.generation).toBe(1)
    expect((await fresh.tools.execute(call('remote_version'))).value).toBe('remote v1')
  })

  it('never runs a provider of a generation retired after its leases were released: the ended turn refuses, a rebuilt runtime gets GENERATION_RETIRED', async () => {
    const log: string[] = []
    const { root, providers } = await versionedRoot(log)
    const journal = root.journal
    const generation1 = root.activeGeneration
    const turn = await begin(root)
    const capturedRuntime = turn.tools
    const capturedCapabilities = turn.capabilities
    expect((await capturedRuntime.execute(call('remote_version'))).value).toBe('remote v1')
    const provider1 = providers.get(1)!
    expect(provider1.execute).toHaveBeenCalledTimes(1)
    await turn.end()
    await root.reload()
    await generation1.whenDisposed

    // The ended turn's own runtime refuses the call outright.
    await expect(capturedRuntime.execute(call('remote_version', 'c2'))).rejects.toMatchObject({ code: 'TURN_ENDED' })

    // Even a runtime freshly built around the captured capabilities cannot reach the provider.
    const envelope = createTurnIngress({ session: 's', principal, signal: new AbortController().signal, journal })
    const rebuilt = new TurnToolRuntime({ turn: envelope, generation: generation1, capabilities: capturedCapabilities })
    const outcomes = await rebuilt.executeBatch([call('remote_version', 'c3'), call('version', 'c4')])
    expect(outcomes.map((o) => o.code)).toEqual(['GENERATION_RETIRED', 'GENERATION_RETIRED'])

    expect(provider1.execute).toHaveBeenCalledTimes(1)
    expect(log.filter((l) => l.startsWith('body') || l.startsWith('remote'))).toEqual(['remote 1'])
    expect(generation1.seam?.disposed).toBe(true)
  })

  it('lets the turn that still leases a retired generation keep calling its provider', async () => {
    const log: string[] = []
    const { root, providers } = await versionedRoot(log)
    await using turn = await begin(root)
    await root.reload()
    expect((await turn.tools.execute(call('remote_version'))).value).toBe('remote v1')
    expect(providers.get(1)!.execute).toHaveBeenCalledTimes(1)
    expect(providers.get(2)!.execute).not.toHaveBeenCalled()
  })

  it('closes a root with a retired generation still leased, ending the turn and disposing both generations', async () => {
    const log: string[] = []
    const journal = memoryJournal()
    const root = await createRoot({
      journal,
      plugin: definePlugin({ name: 'root', setup: (ctx) => void ctx.effect(() => log.push(`dispose ${ctx.generation}`), 'e') }),
    })
    onTestFinished(() => root.close())
    const generation1 = root.activeGeneration
    const turn = await begin(root, 'held')
    await root.reload()
    const generation2 = root.activeGeneration
    expect(log).toEqual([])
    await root.close()
    expect(turn.ended).toBe(true)
    expect([generation1.state, generation2.state]).toEqual(['disposed', 'disposed'])
    expect(log.sort()).toEqual(['dispose 1', 'dispose 2'])
    expect((await journal.read('held')).map((e) => e.kind)).toEqual(['turn/begin', 'turn/end'])
  })

  it('reports disposer failures of a retired generation and at close through the log sink, naming each label', async () => {
    const warnings: { message: string; fields?: Record<string, unknown> }[] = []
    const root = await createRoot({
      log: (level, _scope, message, fields) => {
        if (level === 'warn') warnings.push({ message, fields })
      },
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.effect(() => {
            throw new Error('socket stuck')
          }, 'socket')
          ctx.effect(async () => {
            throw new Error('timer gone')
          }, 'timer')
        },
      }),
    })
    onTestFinished(() => root.close())
    const generation1 = root.activeGeneration
    expect((await root.reload()).ok).toBe(true)
    await generation1.whenDisposed
    expect(warnings).toEqual([
      {
        message: 'generation 1 was disposed with errors: 2 disposer(s) failed: timer: timer gone; socket: socket stuck',
        fields: { generation: 1, labels: ['timer', 'socket'] },
      },
    ])
    await root.close()
    expect(warnings.map((w) => w.message)).toEqual([
      'generation 1 was disposed with errors: 2 disposer(s) failed: timer: timer gone; socket: socket stuck',
      'generation 2 was disposed with errors: 2 disposer(s) failed: timer: timer gone; socket: socket stuck',
    ])
  })

  it('releases a generation\'s plugins even when a provider\'s change subscription fails to unsubscribe', async () => {
    const released: number[] = []
    const root = await createRoot({
      journal: memoryJournal(),
      log: () => {},
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          const generation = ctx.generation
          ctx.effect(() => {
            released.push(generation)
          }, 'probe')
          const seams = new SeamIntegration()
          seams.registerToolService('global', {
            id: 'remote',
            description: 'A provider whose unsubscribe throws.',
            schema: () => [],
            execute: async () => ({ success: true, output: null }),
            onDidChange: () => () => {
              throw new Error('unsubscribe failed')
            },
          } as never)
          ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
        },
      }),
    })
    onTestFinished(() => root.close())
    await root.reload()
    await vi.waitFor(() => expect(released).toEqual([1]))
  })
})

import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../features/define-tool.js'
import { ApprovalGrants } from '../approvals/approval.js'
import { CapabilityIngress } from './capability-ingress.js'
import { GenerationStore } from './generation-store.js'
import type { GenerationEvent, ReloadFailedEvent } from './instrumentation.js'
import { Logger } from '../base/logger.js'
import type { PluginDefinition } from '../../features/plugin-types.js'
import { definePlugin } from '../plugins/plugin.js'

/** A store over `plugin`, recording what it publishes and what it reports as failed. */
function store(plugin: PluginDefinition) {
  const published: GenerationEvent[] = []
  const failed: ReloadFailedEvent[] = []
  const generations = new GenerationStore({
    plugin,
    ingress: new CapabilityIngress({}),
    grants: new ApprovalGrants(),
    logger: new Logger(() => {}),
    onGeneration: (event) => published.push(event),
    onFailed: (event) => failed.push(event),
  })
  return { generations, published, failed }
}

const echo = defineTool({ description: 'Echo.', input: z.object({}), approval: 'never', execute: () => 'e' })

describe('GenerationStore', () => {
  it('runs reloads one at a time in call order, numbering only the published generations', async () => {
    let setups = 0
    const { generations, published } = store(
      definePlugin({
        name: 'root',
        async setup(ctx) {
          setups++
          // The first setup is the slowest: a second reload must still wait for it.
          await new Promise((resolve) => setTimeout(resolve, setups === 1 ? 30 : 0))
          ctx.addTool('echo', echo)
        },
      }),
    )
    const results = await Promise.all([generations.reload(), generations.reload(), generations.reload()])
    expect(results.map((r) => r.ok && r.generation)).toEqual([1, 2, 3])
    expect(published.map((e) => e.generation)).toEqual([1, 2, 3])
    expect(generations.active?.number).toBe(3)
    expect(generations.active?.state).toBe('active')
  })

  it('publishes nothing for an unchanged build asked with skipUnchanged, and publishes it when asked without', async () => {
    const { generations, published } = store(definePlugin({ name: 'root', setup: (ctx) => void ctx.addTool('echo', echo) }))
    await generations.reload()
    const first = generations.active
    const skipped = await generations.reload({ setup: false, changed: new Set(), skipUnchanged: true })
    expect(skipped).toMatchObject({ ok: true, generation: 1 })
    expect(generations.active).toBe(first)
    expect(published.map((e) => e.generation)).toEqual([1])
    const forced = await generations.reload({ setup: false, changed: new Set() })
    expect(forced).toMatchObject({ ok: true, generation: 2, diff: { tools: { added: [], changed: [], removed: [] } } })
    expect(first?.state).toBe('disposed')
  })

  it('reports a failure once while it repeats under skipUnchanged, every time otherwise, and keeps the active generation', async () => {
    let broken = false
    const { generations, failed, published } = store(
      definePlugin({
        name: 'root',
        setup(ctx) {
          if (broken) throw new Error('the config is missing')
          ctx.addTool('echo', echo)
        },
      }),
    )
    await generations.reload()
    broken = true
    expect(await generations.reload({ setup: true })).toMatchObject({ ok: false })
    expect(failed).toHaveLength(1)
    expect(failed[0]?.error.message).toMatch(/the config is missing/)
    // A failed setup stays due: file events run it again, and it fails the same way.
    const fileEvent = { changed: new Set<string>(), skipUnchanged: true }
    expect(await generations.reload(fileEvent)).toMatchObject({ ok: false })
    expect(await generations.reload(fileEvent)).toMatchObject({ ok: false })
    expect(failed).toHaveLength(1)
    await generations.reload({ setup: true })
    expect(failed).toHaveLength(2)
    expect(generations.active?.number).toBe(1)
    // Fixed: published though it offers what generation 1 did, so the end of the failure shows.
    broken = false
    expect(await generations.reload(fileEvent)).toMatchObject({ ok: true, generation: 2 })
    expect(published.map((e) => e.generation)).toEqual([1, 2])
  })

  it('lets the running reload finish on close and answers CLOSED to the queued one and to later ones', async () => {
    let release!: () => void
    let started!: () => void
    const running = new Promise<void>((resolve) => {
      started = resolve
    })
    let setups = 0
    const { generations } = store(
      definePlugin({
        name: 'root',
        async setup() {
          if (++setups === 2) {
            started()
            await new Promise<void>((resolve) => {
              release = resolve
            })
          }
        },
      }),
    )
    await generations.reload()
    const inFlight = generations.reload()
    await running
    const queued = generations.reload()
    const closed = generations.close()
    release()
    await closed
    expect(await inFlight).toMatchObject({ ok: true, generation: 2 })
    expect(await queued).toMatchObject({ ok: false, error: { code: 'CLOSED' } })
    expect(await generations.reload()).toMatchObject({ ok: false, error: { code: 'CLOSED' } })
    expect(setups).toBe(2)
  })

  it('disposes a generation still leased once the grace period ends', async () => {
    const { generations } = store(definePlugin({ name: 'root' }))
    await generations.reload()
    const active = generations.active!
    active.lease()
    const started = performance.now()
    await generations.disposeAll(50)
    expect(performance.now() - started).toBeGreaterThanOrEqual(45)
    expect(active.state).toBe('disposed')
  })
})

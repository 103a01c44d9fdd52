import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { capabilitySeamToken, createRoot, definePlugin, memoryJournal, SeamIntegration, type ToolSchema } from '../src/index.js'
import type { GenerationDiff } from '../src/runtime/generations/instrumentation.js'

/** A provider whose one tool changes on `change(...)`, announcing it as `McpToolService` does on list_changed. */
function changingProvider(initial: Partial<ToolSchema>) {
  let extra = initial
  const listeners = new Set<() => void>()
  const service = {
    id: 'remote',
    description: 'A remote provider.',
    schema: (): ToolSchema[] => [
      { type: 'function', function: { name: 'read', description: 'Read a thing.', parameters: { type: 'object', properties: {} } }, ...extra },
    ],
    execute: async () => ({ success: true as const, output: { text: 'x' } }),
    onDidChange(listener: () => void) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
  const change = (next: Partial<ToolSchema>) => {
    extra = next
    for (const listener of listeners) listener()
  }
  return { service, change }
}

async function rootWith(provider: ReturnType<typeof changingProvider>) {
  const root = await createRoot({
    journal: memoryJournal(),
    log: () => {},
    plugin: definePlugin({
      name: 'root',
      setup(ctx) {
        const seams = new SeamIntegration()
        seams.registerToolService('global', provider.service)
        ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
      },
    }),
  })
  onTestFinished(() => root.close())
  const diffs: GenerationDiff[] = []
  root.on('generation', (event: { diff: GenerationDiff }) => diffs.push(event.diff))
  return { root, diffs }
}

describe('a remote tool that changes only its contract', () => {
  it('publishes a generation when only its annotations change', async () => {
    const provider = changingProvider({ annotations: { readOnlyHint: true } })
    const { root, diffs } = await rootWith(provider)
    const before = root.generation
    provider.change({ annotations: { readOnlyHint: true, openWorldHint: true } })
    await vi.waitFor(() => expect(root.generation).toBe(before + 1))
    expect(diffs.at(-1)?.tools.changed).toEqual(['read'])
  })

  it('publishes a generation when only its output schema changes', async () => {
    const provider = changingProvider({})
    const { root, diffs } = await rootWith(provider)
    const before = root.generation
    provider.change({ outputSchema: { type: 'object', properties: { text: { type: 'string' } } } })
    await vi.waitFor(() => expect(root.generation).toBe(before + 1))
    expect(diffs.at(-1)?.tools.changed).toEqual(['read'])
  })

  it('publishes nothing when the provider announces a change that changes nothing', async () => {
    const provider = changingProvider({ annotations: { readOnlyHint: true } })
    const { root } = await rootWith(provider)
    const before = root.generation
    provider.change({ annotations: { readOnlyHint: true } })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(root.generation).toBe(before)
  })
})

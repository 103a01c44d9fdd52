import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool, type ToolDefinition } from '../../features/define-tool.js'
import { CapabilityIngress } from './capability-ingress.js'
import { toolsByName } from './tool-binding.js'
import type { ToolCapability } from '../../seams/capabilities.js'
import type { Generation } from './generation.js'
import { buildGeneration } from './generation-builder.js'
import { Logger } from '../base/logger.js'
import { definePlugin } from '../plugins/plugin.js'

const logger = new Logger(() => {})

/** Projects, as the root sees it, a root plugin whose setup adds `tools` (name → definition). */
async function project(tools: () => Record<string, ToolDefinition>, number: number): Promise<readonly ToolCapability[]> {
  return (await projectIn(tools, number)).tools
}

async function projectIn(
  tools: () => Record<string, ToolDefinition>,
  number: number,
): Promise<{ generation: Generation; tools: readonly ToolCapability[]; bound: ReturnType<typeof toolsByName> }> {
  const ingress = new CapabilityIngress()
  const plugin = definePlugin({
    name: 'root',
    setup(ctx) {
      for (const [name, tool] of Object.entries(tools())) ctx.addTool(name, tool)
    },
  })
  const result = await buildGeneration({ number, plugin, ingress, logger })
  if (!result.ok) throw result.error
  onTestFinished(() => result.generation.dispose())
  const projection = await ingress.project(result.generation, 'root')
  return { generation: result.generation, tools: projection.tools, bound: toolsByName(projection.base, result.generation) }
}

const tool = (description: string, permissions?: string[]) =>
  defineTool({ description, input: z.object({ id: z.string() }), permissions, execute: ({ id }) => id }) as ToolDefinition

describe('feature capabilities across generations', () => {
  it('keeps an unchanged definition as the same frozen capability, bound to each generation on its own', async () => {
    const kept = tool('Kept.')
    const first = await projectIn(() => ({ kept, gone: tool('Gone.') }), 1)
    const second = await projectIn(() => ({ kept }), 2)
    const capability = second.tools[0]!
    expect(capability).toBe(first.tools[0])
    expect(Object.isFrozen(capability)).toBe(true)
    expect(first.bound.get('kept')).toMatchObject({ kind: 'feature', capability, generation: first.generation })
    expect(second.bound.get('kept')).toMatchObject({ kind: 'feature', capability, generation: second.generation })
    expect([...second.bound.keys()]).toEqual(['kept'])
  })

  it('gives an edited definition its own schema and fingerprint', async () => {
    const [before] = await project(() => ({ lookup: tool('Look up a ticket.') }), 1)
    const [after] = await project(() => ({ lookup: tool('Look up a ticket by id.') }), 2)
    expect(after!.description).toBe('Look up a ticket by id.')
    expect(after!.fingerprint).not.toBe(before!.fingerprint)
  })

  it('sees a permission list the plugin changed in place, rather than the one it had before', async () => {
    const permissions = ['tickets:read']
    const gated = tool('Gated.', permissions)
    const [before] = await project(() => ({ gated }), 1)
    permissions.push('tickets:write')
    const [after] = await project(() => ({ gated }), 2)
    expect(before!.permissions).toEqual(['tickets:read'])
    expect(after!.permissions).toEqual(['tickets:read', 'tickets:write'])
  })

  it('projects one definition added under two names as two tools, each with its own name and fingerprint', async () => {
    const shared = tool('Shared.')
    const tools = await project(() => ({ first: shared, second: shared }), 1)
    expect(tools.map((t) => t.name)).toEqual(['first', 'second'])
    expect(tools[0]!.fingerprint).not.toBe(tools[1]!.fingerprint)
    const again = await project(() => ({ second: shared, first: shared }), 2)
    expect(again.map((t) => [t.name, t.fingerprint])).toEqual([
      ['second', tools[1]!.fingerprint],
      ['first', tools[0]!.fingerprint],
    ])
  })
})

import { toJsonSchema } from '../features/schema.js'
import type { ToolBinding } from '../runtime/generations/tool-binding.js'
import type { AgentCapabilities, ToolCapability } from '../seams/capabilities.js'
import { definitionOf } from '../runtime/generations/feature-capability.js'
import type { ProviderStatus } from '../seams/types.js'
import type { CatalogView, ProviderView, ResourceView, SkillView, ToolView } from './types.js'

const APPROVAL_MEANING: Readonly<Record<ToolView['approval'], string>> = {
  never: 'never asks (unless a hook asks)',
  'on-risk': 'asks when the call looks risky (or the tool declares no risk information)',
  once: 'asks once per session, again when the tool changes',
  always: 'asks every call',
}

/** The catalog as the page shows it: every tool and skill of one generation, schemas as JSON Schema. */
export function catalogView(capabilities: AgentCapabilities, live: boolean, defaultTimeoutMs: number): CatalogView {
  return {
    generation: capabilities.generation,
    live,
    defaultTimeoutMs,
    tools: capabilities.tools.map(toolView),
    skills: capabilities.skills.map(
      (skill): SkillView => ({
        name: skill.name,
        description: skill.description,
        source: skill.source,
        owner: skill.owner,
        tools: skill.tools,
        always: skill.always,
        instructions: skill.instructions,
      }),
    ),
    resources: capabilities.resources.map(
      (r): ResourceView => ({
        uri: r.uri,
        template: r.template,
        name: r.name,
        source: r.source,
        owner: r.owner,
        ...(r.title !== undefined ? { title: r.title } : {}),
        ...(r.description !== undefined ? { description: r.description } : {}),
        ...(r.mimeType !== undefined ? { mimeType: r.mimeType } : {}),
        ...(r.size !== undefined ? { size: r.size } : {}),
      }),
    ),
  }
}

function toolView(tool: ToolCapability): ToolView {
  const definition = definitionOf(tool) as { output?: unknown; isConcurrencySafe?: unknown } | undefined
  return {
    name: tool.name,
    description: tool.description,
    source: tool.source,
    owner: tool.owner,
    kind: tool.kind,
    approval: tool.approval,
    approvalMeaning: APPROVAL_MEANING[tool.approval],
    concurrency: concurrencyOf(tool, definition),
    ...(tool.timeoutMs !== undefined ? { timeoutMs: tool.timeoutMs } : {}),
    permissions: tool.permissions,
    input: tool.parameters,
    ...(definition?.output !== undefined ? { output: outputSchema(definition.output) } : {}),
    ...(tool.annotations?.readOnlyHint !== undefined ? { readOnly: tool.annotations.readOnlyHint } : {}),
    ...(tool.annotations?.destructiveHint !== undefined ? { destructive: tool.annotations.destructiveHint } : {}),
  }
}

function concurrencyOf(tool: ToolCapability, definition: { isConcurrencySafe?: unknown } | undefined): string {
  if (tool.kind === 'seam') return tool.concurrencySafe === true ? 'runs beside other calls' : 'runs alone (exclusive)'
  return typeof definition?.isConcurrencySafe === 'function' ? 'decided per call by isConcurrencySafe(args)' : 'runs alone (exclusive)'
}

function outputSchema(output: unknown): unknown {
  try {
    return toJsonSchema(output)
  } catch {
    return undefined
  }
}

/**
 * The providers of the live generation, each with the number of tools it contributes: counted by
 * the service each tool is bound to (a provider names its tools' `source` as it likes, `mcp:<id>`).
 */
export function providerViews(bindings: ReadonlyMap<string, ToolBinding>, statuses: readonly ProviderStatus[]): ProviderView[] {
  return statuses.map((status) => providerView(bindings, status))
}

export function providerView(bindings: ReadonlyMap<string, ToolBinding>, status: ProviderStatus): ProviderView {
  let tools = 0
  for (const binding of bindings.values()) if (binding.kind === 'seam' && binding.service.id === status.provider) tools += 1
  return {
    provider: status.provider,
    state: status.state,
    ...(status.reason !== undefined ? { reason: status.reason } : {}),
    ...(status.retryAt !== undefined ? { retryAt: status.retryAt } : {}),
    tools,
  }
}

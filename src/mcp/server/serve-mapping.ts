import type { CallToolResult, Prompt, Resource, ResourceTemplateType, Tool } from '@modelcontextprotocol/server'
import type { AgentCapabilities, ResourceCapability, SkillCapability, ToolCapability } from '../../seams/capabilities.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import { redactedContent } from '../../runtime/base/privacy.js'
import { scrubValues } from '../../runtime/base/redact.js'

/** What one generation shows an MCP client: its tools and its skills as prompts. */
export interface McpCatalog {
  readonly generation: number
  readonly tools: readonly Tool[]
  readonly prompts: readonly Prompt[]
  readonly skills: ReadonlyMap<string, SkillCapability>
  /** The MCP client capabilities each tool that declares some needs (`ToolSpecBase.clientCapabilities`). */
  readonly needs: ReadonlyMap<string, readonly string[]>
  /** The task-capable tools (`ToolSpecBase.task`) and how. */
  readonly tasks: ReadonlyMap<string, 'optional' | 'required'>
  /** The task-capable tools whose calls become tasks once they stop asking (`ToolSpecBase.taskStarts`). */
  readonly tasksAfterInput: ReadonlySet<string>
  /** The serialised lists: a publish announces `list_changed` only when one of these differs. */
  readonly toolsText: string
  readonly promptsText: string
  readonly resources: readonly Resource[]
  readonly resourceTemplates: readonly ResourceTemplateType[]
  /** Both resource lists serialised: `resources/list_changed` is announced when it differs. */
  readonly resourcesText: string
  /** Each listed resource's version: a subscribed client is told `resources/updated` when it differs. */
  readonly resourceVersions: ReadonlyMap<string, string>
}

/** Projects capabilities once; the result is served for every `tools/list` of that generation. */
export function toCatalog(capabilities: AgentCapabilities, versions: ReadonlyMap<string, string> = new Map()): McpCatalog {
  const tools = capabilities.tools.map(toMcpTool)
  const resources = capabilities.resources.filter((r) => !r.template).map((r): Resource => ({ uri: r.uri, name: r.name, ...described(r) }))
  const resourceTemplates = capabilities.resources.filter((r) => r.template).map((r): ResourceTemplateType => ({ uriTemplate: r.uri, name: r.name, ...described(r) }))
  const prompts = capabilities.skills.map(
    (skill): Prompt => ({ name: skill.name, description: skill.description, ...(skill.arguments ? { arguments: skill.arguments.map(({ name, description, required }) => ({ name, ...(description !== undefined ? { description } : {}), ...(required !== undefined ? { required } : {}) })) } : {}) }),
  )
  return {
    generation: capabilities.generation,
    tools,
    prompts,
    skills: new Map(capabilities.skills.map((skill) => [skill.name, skill])),
    needs: new Map(capabilities.tools.flatMap((tool) => (tool.clientCapabilities ? [[tool.name, tool.clientCapabilities] as const] : []))),
    tasks: new Map(capabilities.tools.flatMap((tool) => (tool.task ? [[tool.name, tool.task] as const] : []))),
    tasksAfterInput: new Set(capabilities.tools.flatMap((tool) => (tool.task && tool.taskStarts === 'after-input' ? [tool.name] : []))),
    toolsText: JSON.stringify(tools),
    promptsText: JSON.stringify(prompts),
    resources,
    resourceTemplates,
    resourcesText: JSON.stringify([resources, resourceTemplates]),
    resourceVersions: new Map(resources.map((r) => [r.uri, versions.get(r.uri) ?? ''])),
  }
}

function described(r: ResourceCapability): { title?: string; description?: string; mimeType?: string; size?: number } {
  const out: { title?: string; description?: string; mimeType?: string; size?: number } = {}
  if (r.title !== undefined) out.title = r.title
  if (r.description !== undefined) out.description = r.description
  if (r.mimeType !== undefined) out.mimeType = r.mimeType
  if (r.size !== undefined && !r.template) out.size = r.size
  return out
}

/** The annotations MCP defines, served as the tool declares them. */
const ANNOTATIONS = ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

/** MCP requires `type: 'object'` at the top of an input schema; anything else is wrapped. */
export function toMcpTool(tool: ToolCapability): Tool {
  const schema = tool.parameters as Record<string, unknown>
  let inputSchema: Tool['inputSchema']
  if (schema.type === 'object') inputSchema = schema as Tool['inputSchema']
  else if (schema.type === undefined) inputSchema = { ...schema, type: 'object' }
  else inputSchema = { type: 'object', allOf: [schema] }
  const out: Tool = { name: tool.name, description: tool.description, inputSchema }
  // MCP output schemas describe `structuredContent`, which is an object: other values are not advertised.
  if (tool.outputSchema?.type === 'object') out.outputSchema = tool.outputSchema as Tool['outputSchema']
  const hints = tool.annotations
  if (hints) {
    const annotations: NonNullable<Tool['annotations']> = {}
    for (const key of ANNOTATIONS) if (hints[key] !== undefined) Object.assign(annotations, { [key]: hints[key] })
    if (Object.keys(annotations).length > 0) out.annotations = annotations
  }
  return out
}

/**
 * A settled outcome as a `tools/call` result. Completed calls carry their content blocks as they are
 * (text, images, audio, resources), and their value as `structuredContent` when it is a plain
 * object; every other status is `isError` with the outcome's code in front of its (already
 * explanatory) text, redacted: `[APPROVAL_UNAVAILABLE] The call …`.
 */
export function toCallToolResult(outcome: ToolCallOutcome): CallToolResult {
  // Outcome blocks have MCP's shapes already (checked and frozen by the pipeline): only the list is copied.
  if (outcome.status === 'completed') {
    const content = outcome.content.slice() as CallToolResult['content']
    return isPlainObject(outcome.value) ? { content, structuredContent: outcome.value } : { content }
  }
  // A failure's text (a thrown error, a block's feedback, a denial's reason) is redacted like the journal's copy.
  const content = redactedContent(outcome.content).slice() as CallToolResult['content']
  const tag = `[${outcome.code ?? outcome.status.toUpperCase()}]`
  const first = content[0]
  if (first?.type === 'text') content[0] = { type: 'text', text: `${tag} ${first.text}` }
  else content.unshift({ type: 'text', text: `${tag} The call to "${scrubValues(outcome.name)}" ${outcome.status === 'failed' ? 'failed' : `was ${outcome.status}`}.` })
  return { content, isError: true }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

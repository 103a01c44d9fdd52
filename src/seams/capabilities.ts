import type { ApprovalMode, IdempotencyScope, JsonSchema, OriginScope, ToolAnnotations } from './types.js'

/** A projected tool: the canonical policy metadata of a Feature or Seam tool. Frozen. */
export interface ToolCapability {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  /** The JSON Schema of the tool's value (a tool's `output`, a remote tool's `outputSchema`), when it declares one. */
  readonly outputSchema?: JsonSchema
  /** `tools/x.ts`, `addTool`, `seam:<providerId>` or the provider's own `source`. */
  readonly source: string
  readonly owner: string
  readonly kind: 'feature' | 'seam'
  readonly approval: ApprovalMode
  readonly permissions: readonly string[]
  readonly platforms: readonly string[]
  readonly scopes: readonly OriginScope[]
  readonly annotations?: Readonly<ToolAnnotations>
  /** Seam tools only: the provider's static concurrency declaration. */
  readonly concurrencySafe?: boolean
  readonly timeoutMs?: number
  /** Set when progress may extend the deadline: up to this long from the body's start. */
  readonly maxTimeoutMs?: number
  /** Set when the tool declares an idempotency key: where its keys are unique. */
  readonly idempotencyScope?: IdempotencyScope
  /** Seam tools only: the argument names whose values make the key. */
  readonly idempotencyKey?: readonly string[]
  /** Set (to `false`) only for a seam tool whose `annotations` are not to be acted on (`ToolSchema.trustAnnotations`). */
  readonly trustAnnotations?: false
  /** Set (to `'rerun'`) only when a keyed tool runs again after its key's earlier call ended `OUTCOME_UNKNOWN`. */
  readonly onUnknown?: 'rerun'
  /** Feature tools only: the MCP client capabilities a served call needs (`ToolSpecBase.clientCapabilities`). */
  readonly clientCapabilities?: readonly string[]
  /** Feature tools only: served over MCP as task-capable (`ToolSpecBase.task`). */
  readonly task?: 'optional' | 'required'
  /** Set (to `'after-input'`) only for a task tool whose calls become tasks once they stop asking (`ToolSpecBase.taskStarts`). */
  readonly taskStarts?: 'after-input'
  /** Name, description and input schema: session grants are dropped when it changes. */
  readonly fingerprint: string
}

export interface SkillCapability {
  readonly name: string
  readonly description: string
  readonly instructions: string
  readonly source: string
  readonly owner: string
  readonly tools: readonly string[]
  readonly always: boolean
  /** Its arguments when served as a prompt (`{{name}}` in `instructions`). */
  readonly arguments?: readonly {
    readonly name: string
    readonly description?: string
    readonly required?: boolean
    /** Asked of the person when a `prompts/get` leaves it out (`SkillArgumentAsk`). */
    readonly ask?: { readonly message: string; readonly key?: string; readonly title?: string; readonly description?: string }
    /** What `completion/complete` offers for it (`SkillArgument.values`). */
    readonly values?: readonly string[]
  }[]
  /** Resource URIs (or `file:` paths of resource files) the prompt embeds. */
  readonly resources?: readonly string[]
}

/** A projected resource or resource template: what it is, never how it is read. Frozen. */
export interface ResourceCapability {
  /** The URI; for a template, its RFC 6570 level-1 URI template (`notes://{id}`). */
  readonly uri: string
  readonly template: boolean
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  readonly size?: number
  /** `agent/resources/x.md`, `addResource(<owner>)` or `seam:<providerId>`. */
  readonly source: string
  readonly owner: string
  readonly kind: 'feature' | 'seam'
}

/** Everything one owner's turn can see in one generation. Frozen. */
export interface AgentCapabilities {
  readonly generation: number
  readonly owner: string
  readonly tools: readonly ToolCapability[]
  readonly skills: readonly SkillCapability[]
  /** Resources and resource templates (`template: true`), in projection order. */
  readonly resources: readonly ResourceCapability[]
}

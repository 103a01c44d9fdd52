// The public surface of seam-runtime. Every export here is public API: add with care, never `export *`.

// ── Errors ──────────────────────────────────────────────────────────────────────────────────
export { ErrorCode, SeamError } from './errors.js'
export type { OutcomeCode, SeamErrorOptions } from './errors.js'

// ── Features: tools and skills a plugin declares ───────────────────────────────────────────
export { defineSkill, defineTool } from './features/define-tool.js'
export type {
  DeferredContext,
  FinalizeInfo,
  IdempotencyContext,
  RiskContext,
  SkillDefinition,
  SkillSpec,
  ToolContext,
  ToolDefinition,
  ToolSpec,
} from './features/define-tool.js'
export type { Diagnostic } from './features/diagnostic.js'

// ── Plugins and resources ──────────────────────────────────────────────────────────────────
export { definePlugin } from './runtime/plugin.js'
export { createToken } from './runtime/resources.js'
export type { Resources, Token } from './runtime/resources.js'
export type { Disposer, PluginContext, PluginDefinition, PluginHooks } from './runtime/plugin-types.js'

// ── Root Capability Seam ───────────────────────────────────────────────────────────────────
export { SeamIntegration, capabilitySeamToken, seamIntegrationToken } from './seams/integration.js'
export { SeamProviderRegistry } from './seams/registry.js'
export { BuiltinToolService, SkillRegistryAsService, ToolRegistryAsService } from './seams/adapters.js'
export { McpToolService } from './mcp/client/mcp-tool-service.js'
export type {
  McpHttpTransportOptions,
  McpProtocolChoice,
  McpReconnectOptions,
  McpStdioTransportOptions,
  McpToolServiceOptions,
  McpTransportOptions,
} from './mcp/client/options.js'
export type {
  ApprovalMode,
  IdempotencyScope,
  Json,
  JsonSchema,
  Principal,
  QuestionPort,
  SkillService,
  ToolExecutionResult,
  ToolInvocationContext,
  ToolSchema,
  ToolService,
  UnknownOutcomePolicy,
} from './seams/types.js'

// ── Runtime: root, generations, turns, the pipeline ─────────────────────────────────────────
export { createRoot, Root } from './runtime/root.js'
export type { BeginTurnInput, GenerationEvent, ReloadFailedEvent, ReloadResult, RootOptions } from './runtime/root.js'
export type { GenerationDiff } from './runtime/generation-builder.js'
export { Turn } from './runtime/turn.js'
export { CapabilityIngress } from './runtime/capability-ingress.js'
export type { AgentCapabilities, SkillCapability, ToolCapability } from './runtime/capability-ingress.js'
export { createTurnIngress } from './runtime/turn-ingress.js'
export type { TurnEnvelope, TurnIngressInput, TurnOrigin, TurnPolicy, TurnPorts } from './runtime/turn-ingress.js'
export { TurnToolRuntime } from './runtime/turn-tool-runtime.js'
export type { TurnToolRuntimeOptions } from './runtime/turn-tool-runtime.js'
export { deferApprovals } from './runtime/approval-types.js'
export type { ApprovalAnswer, ApprovalPort, ApprovalReply, ApprovalRequest, PermissionHost } from './runtime/approval-types.js'
export type { Approvals, PendingApproval, PendingQuery } from './runtime/approvals.js'
export type {
  DispatchResult,
  ExecuteWrapper,
  Guard,
  PostDecision,
  PostExecuteHook,
  PreDecision,
  PreExecuteHook,
  ResultObserver,
  ToolCall,
  ToolCallOutcome,
  ToolExecution,
} from './runtime/pipeline/types.js'

// ── Journal ────────────────────────────────────────────────────────────────────────────────
export { memoryJournal, postgresJournal, redactText, registerSecret, sqliteJournal } from './runtime/journal/index.js'
export { isSecretEnv, withoutSecrets } from './runtime/secret-env.js'
export type {
  Claimed,
  HostBeat,
  KeyClaim,
  KeyHolder,
  ParkedCall,
  ParkedDecision,
  ParkedQuery,
  ParkedSettlement,
  SessionGrant,
  StoredResult,
} from './runtime/journal/coordination.js'
export type {
  ContentBlock,
  JournalCoordination,
  JournalEvent,
  JournalEventKind,
  JournalStore,
  RepairHosts,
  RepairOptions,
  RepairReport,
  TurnPage,
  TurnQuery,
  TurnSummary,
} from './runtime/journal/index.js'

// ── Model loops: provider-neutral messages, the reference agent loop, the journal transcript ──────
// (the wire-format adapters are the subpath entries seam-runtime/openai, /anthropic and /ai-sdk)
export { runAgent } from './adapters/agent.js'
export type { AgentEvent, AgentResult, AgentRun, RunAgentOptions } from './adapters/agent.js'
export { observeApprovals } from './adapters/agent-approvals.js'
export type { ApprovalEvent, ObservedApprovals } from './adapters/agent-approvals.js'
export { openAiChatModel } from './adapters/model-client.js'
export type { ModelClient, ModelDelta, ModelReply, ModelRequest, OpenAiChatModelOptions } from './adapters/model-client.js'
export { transcript } from './adapters/transcript.js'
export type { TranscriptJournal } from './adapters/transcript.js'
export type { AgentMessage, ToolResult } from './adapters/messages.js'

// ── Telemetry ──────────────────────────────────────────────────────────────────────────────
export { openTelemetry } from './telemetry/open-telemetry.js'
export type { TelemetryOptions } from './telemetry/open-telemetry.js'
export type {
  CallProbe,
  Instrumentation,
  ReloadPhase,
  ReloadProbe,
  SettledCall,
  TurnProbe,
} from './runtime/instrumentation.js'

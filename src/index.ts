// The public surface of seam-runtime. Every export here is public API: add with care, never `export *`.

import { bindLate } from './runtime/generations/late-bound.js'
import * as pluginRuntime from './plugin-runtime.js'
import { openTelemetry } from './telemetry/open-telemetry.js'

// What the runtime uses from above it (runtime/base/late-bound.ts): this module's own namespace and
// plugin-runtime's, for the tool files a root loads, and the OpenTelemetry layer.
let hostModules: Promise<Record<string, unknown>> | undefined
bindLate({
  hostModules: () =>
    (hostModules ??= Promise.all([import(import.meta.url), import('zod')]).then(([seam, zod]) => ({
      'seam-runtime': seam,
      'seam-runtime/plugin-runtime': pluginRuntime,
      zod,
    }))),
  openTelemetry,
})

// ── Errors ──────────────────────────────────────────────────────────────────────────────────
export { ErrorCode, SeamError } from './errors.js'
export type { OutcomeCode, SeamErrorOptions } from './errors.js'

// ── Features: tools and skills a plugin declares ───────────────────────────────────────────
export { defineSkill, defineTool } from './features/define-tool.js'
export type { FinalizeInfo, IdempotencyContext, RiskContext, SkillArgument, SkillArgumentAsk, SkillDefinition, SkillSpec, ToolContext, ToolDefinition, ToolSpec } from './features/define-tool.js'
export type { DeferredContext } from './seams/calls.js'
export type { Diagnostic } from './features/diagnostic.js'

// ── Plugins and resources ──────────────────────────────────────────────────────────────────
export { definePlugin } from './runtime/plugins/plugin.js'
export { createToken } from './seams/tokens.js'
export type { Resources, Token } from './seams/tokens.js'
export type { Disposer, PluginContext, PluginDefinition, PluginHooks } from './features/plugin-types.js'

// ── Root Capability Seam ───────────────────────────────────────────────────────────────────
export { SeamIntegration, capabilitySeamToken, seamIntegrationToken } from './seams/integration.js'
export { SeamProviderRegistry } from './seams/registry.js'
export { BuiltinToolService, SkillRegistryAsService, ToolRegistryAsService } from './features/service-adapters.js'
export { McpToolService } from './mcp/client/mcp-tool-service.js'
export { type McpAuthorizationCodeOptions, type McpClientCredentialsOptions, type McpOAuthOptions, type OAuthSignIn, type OAuthSignInRequest, provideOAuthSignIn } from './mcp/client/oauth.js'
export { MemoryOAuthTokenStore, type OAuthRecord, type OAuthTokenStore } from './seams/oauth-tokens.js'
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
export type { BeginTurnInput, RootOptions } from './runtime/root.js'
export type { GenerationEvent, ReloadFailedEvent, ReloadResult } from './runtime/generations/instrumentation.js'
export type { GenerationDiff } from './runtime/generations/instrumentation.js'
export { Turn } from './runtime/turns/turn.js'
export { CapabilityIngress } from './runtime/generations/capability-ingress.js'
export type { AgentCapabilities, SkillCapability, ToolCapability } from './seams/capabilities.js'
export { createTurnIngress } from './runtime/turns/turn-ingress.js'
export type { TurnIngressInput } from './runtime/turns/turn-ingress.js'
export type { TurnEnvelope, TurnOrigin, TurnPolicy, TurnPorts } from './seams/types.js'
export { TurnToolRuntime } from './runtime/turns/turn-tool-runtime.js'
export type { TurnToolRuntimeOptions } from './runtime/turns/turn-tool-runtime.js'
export { deferApprovals } from './seams/approval.js'
export type { ApprovalAnswer, ApprovalPort, ApprovalReply, ApprovalRequest, PermissionHost } from './seams/approval.js'
export type { Approvals, PendingApproval, PendingQuery } from './runtime/approvals/approvals.js'
export type {
  AnswerValue,
  ClientRoot,
  QuestionAnswer,
  QuestionField,
  QuestionRequest,
  QuestionSchema,
  RootsRequest,
  SampleRequest,
  SampleResult,
  SamplingContent,
  SamplingMessage,
  ToolQuestion,
  ToolRootsQuery,
  ToolSample,
} from './seams/questions.js'
export type { ClientMethod } from './seams/journal.js'
export type { DispatchResult, ExecuteWrapper, Guard, PostDecision, PostExecuteHook, PreDecision, PreExecuteHook, ResultObserver, ExecuteOptions, ProgressEvent, ToolCall, ToolCallOutcome, ToolExecution } from './seams/calls.js'
export type { ToolProgress } from './seams/types.js'

// ── Journal ────────────────────────────────────────────────────────────────────────────────
export { memoryJournal, postgresJournal, redactText, registerSecret, sqliteJournal } from './runtime/journal/index.js'
export { isSecretEnv, withoutSecrets } from './runtime/base/secret-env.js'
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
} from './seams/coordination.js'
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
export type { TelemetryOptions } from './runtime/generations/instrumentation.js'
export type {
  CallProbe,
  Instrumentation,
  ReloadPhase,
  ReloadProbe,
  SettledCall,
  TurnProbe,
} from './runtime/generations/instrumentation.js'
// Code Mode (docs/code-mode.md): the sandbox run_code runs in, usable on its own, and its rules and declarations.
export { CODE_MODE_RULES, createCodeSandbox, DEFAULT_CODE_LIMITS, declarationsFor } from './runtime/code/index.js'
export type {
  CodeFailureCode,
  CodeHost,
  CodeLimits,
  CodeLogEntry,
  CodeLogLevel,
  CodeRecorded,
  CodeRunCode,
  CodeRunRequest,
  CodeRunResult,
  CodeSandbox,
  CodeSandboxOptions,
  SubCallSettlement,
  ToolDeclarationSource,
} from './runtime/code/index.js'
export type { CodeModeOption } from './runtime/code/run-code.js'

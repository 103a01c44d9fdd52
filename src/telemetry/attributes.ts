/**
 * Attribute, span and instrument names. `gen_ai.*` follow the OpenTelemetry GenAI semantic
 * conventions (execute_tool spans); `seam.*` are this runtime's own.
 */
export const ATTR = {
  operation: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  conversation: 'gen_ai.conversation.id',
  errorType: 'error.type',
  generation: 'seam.generation',
  status: 'seam.outcome.status',
  code: 'seam.outcome.code',
  policy: 'seam.policy',
  source: 'seam.source',
  host: 'seam.host',
  turnId: 'seam.turn.id',
  owner: 'seam.owner',
  reason: 'seam.reason',
  decision: 'seam.approval.decision',
  waitMs: 'seam.approval.wait_ms',
  timeoutMs: 'seam.timeout_ms',
  progressDone: 'seam.progress.done',
  progressTotal: 'seam.progress.total',
  progressMessage: 'seam.progress.message',
  durationMs: 'seam.duration_ms',
  file: 'seam.file',
  reloadOk: 'seam.reload.ok',
  journalEvent: 'seam.journal.event',
  provider: 'seam.provider',
  providerStatus: 'seam.provider.status',
} as const

export const EVENT = {
  approvalAsked: 'seam.approval.asked',
  approvalDecided: 'seam.approval.decided',
  guardDenied: 'seam.guard.denied',
  timeout: 'seam.tool.timeout',
  abandoned: 'seam.tool.abandoned',
  progress: 'seam.tool.progress',
} as const

/** The instrumentation scope every span and instrument is created in. */
export const SCOPE = 'seam-runtime'

/** Reasons (denials, approval questions) are cut to this many bytes: they are diagnostics, not payloads. */
export const MAX_REASON_BYTES = 1_024

import type { MeterProvider, TracerProvider } from '@opentelemetry/api'
import type { ToolCapability } from '../../seams/capabilities.js'
import type { SeamError } from '../../errors.js'
import type { Diagnostic } from '../../features/diagnostic.js'
import type { ApprovalDecision, JournalEventKind } from '../../seams/journal.js'
import type { ProgressEvent, ToolCall, ToolCallOutcome } from '../../seams/calls.js'
import type { TurnEnvelope } from '../../seams/types.js'

/**
 * The instrumentation seam: what the runtime tells an observer (the OpenTelemetry layer, or a host's
 * own) about its work, at a few points only:
 * - a turn begins and ends; each of its calls starts and settles with its outcome;
 * - inside a call: approval asked and decided (with the wait), a guard denial, progress, the deadline, a body
 *   abandoned after its grace period (and when it finally returns);
 * - a reload runs its phases (setup, bundle, evaluate, project, publish) and ends published or not;
 * - a journal append took so long; a group commit wrote so many events at once.
 *
 * Without an `Instrumentation` the runtime holds `undefined` probes and skips every report, so the
 * default costs one property read per point. Probes are called synchronously on the pipeline's path
 * and MUST NOT throw or block; anything slow belongs in the observer's own exporter.
 */
export interface Instrumentation {
  /** A turn began (its `turn/begin` is journaled). The probe hears its calls and its end. */
  turn(turn: TurnEnvelope, generation: number): TurnProbe | undefined
  /** A reload started building a candidate generation. */
  reload(): ReloadProbe | undefined
  /** A journal store's group commit wrote `events` events in one transaction. */
  committed?(events: number): void
}

export interface TurnProbe {
  /** A call of this turn was accepted; its duration counts from here (as `ToolCallOutcome.durationMs`). */
  call(call: ToolCall): CallProbe | undefined
  /** One journal append of this turn's calls settled after `durationMs`. */
  appended?(kind: JournalEventKind, durationMs: number, failed: boolean): void
  /** The turn ended and every call it ran has settled. */
  ended(reason: 'ended' | 'interrupted'): void
}

/** What a probe learns about the call when it settles. `arguments` are the raw text as journaled. */
export interface SettledCall {
  readonly outcome: ToolCallOutcome
  readonly capability: ToolCapability | undefined
  readonly arguments: string | undefined
}

export interface CallProbe {
  /**
   * Calls `body` with `self` and `args` in the call's own context, so what the body (or provider)
   * traces nests under the call. (Arguments rather than a closure: nothing is allocated without a probe.)
   */
  within<A extends unknown[], R>(body: (...args: A) => R, self: unknown, ...args: A): R
  approvalAsked(reason: string): void
  /** `deferred`: the call is parked until someone decides (it then settles `suspended`). */
  approvalDecided(decision: ApprovalDecision | 'deferred', waitMs: number): void
  guardDenied(reason: string): void
  /** The body reported progress (throttled as observers hear it). */
  progress?(event: ProgressEvent): void
  /** The body passed its deadline and was told to stop. */
  timedOut(timeoutMs: number): void
  /** The body outlived its grace period; the call settles without it. */
  abandoned(): void
  /** An abandoned body finally returned (after its call settled). */
  returnedLate(): void
  /** The outcome is final (stage 10, with the live observers); called once per call. */
  settled(call: SettledCall): void
  /** A nested call this call's body made (`ctx.tools.call`, a Code Mode sub-call): its probe, under this one. */
  child?(call: ToolCall): CallProbe | undefined
}

export type ReloadPhase = 'setup' | 'bundle' | 'evaluate' | 'project' | 'publish'

export interface ReloadProbe {
  /** One phase ran from `startedAt` to `endedAt` (`performance.now()` values); `file` for bundle and evaluate. */
  phase(name: ReloadPhase, startedAt: number, endedAt: number, file?: string): void
  /** The reload ended: published, unchanged (`generation` is the live one) or rolled back. */
  ended(result: ReloadResult): void
}

export interface GenerationDiff {
  readonly tools: { readonly added: string[]; readonly changed: string[]; readonly removed: string[] }
  readonly skills: { readonly added: string[]; readonly changed: string[]; readonly removed: string[] }
  /** By URI; `changed` when what a read returns changed (a file's content, a re-run `addResource`). */
  readonly resources?: { readonly added: string[]; readonly changed: string[]; readonly removed: string[] }
}

export interface GenerationEvent {
  readonly generation: number
  readonly durationMs: number
  readonly diff: GenerationDiff
  readonly diagnostics: readonly Diagnostic[]
}

export interface ReloadFailedEvent {
  readonly durationMs: number
  readonly diagnostics: readonly Diagnostic[]
  readonly error: SeamError
}

export type ReloadResult = ({ ok: true } & GenerationEvent) | ({ ok: false } & ReloadFailedEvent)

/** The options of `openTelemetry()` (src/telemetry), which `createRoot({ telemetry })` also takes. */
export interface TelemetryOptions {
  /** Default: the global one (`trace.setGlobalTracerProvider`, as an OpenTelemetry SDK registers it). */
  readonly tracerProvider?: TracerProvider
  /** Default: the global one at the time `openTelemetry()` is called; register the SDK first. */
  readonly meterProvider?: MeterProvider
  /** Put each call's arguments on its span (`gen_ai.tool.call.arguments`), redacted and bounded as in the journal. Default false. */
  readonly recordArguments?: boolean
  /** Put each call's result on its span (`gen_ai.tool.call.result`), redacted and bounded. Default false. */
  readonly recordResults?: boolean
  /** Bound on a recorded argument or result, in UTF-8 bytes (default 64 KiB, as the journal's). */
  readonly maxPayloadBytes?: number
  /** `seam.host` on every call span. Default `hostname:pid`, as the durable journals stamp. */
  readonly host?: string
}

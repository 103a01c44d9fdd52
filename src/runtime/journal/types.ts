import type { OutcomeCode } from '../../errors.js'

export type JournalEventKind =
  | 'turn/begin'
  | 'tool/call'
  | 'approval/asked'
  | 'approval/decided'
  | 'tool/result'
  | 'turn/end'

export type ContentBlock = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }

export type OutcomeStatus = 'completed' | 'denied' | 'failed' | 'cancelled'
export type DenialPolicy = 'permission' | 'hook' | 'approval' | 'guard'
export type ApprovalDecision = 'allowed-once' | 'allowed-session' | 'rejected' | 'unavailable' | 'timeout' | 'cancelled'

interface EventBase {
  readonly turnId: string
  /** Per-turn sequence, assigned by the turn (1, 2, 3 …); `(turnId, seq)` is unique. */
  readonly seq: number
  /** Epoch milliseconds. */
  readonly at: number
  /** The host that wrote the event (postgres journals shared by several hosts). */
  readonly host?: string
}

export type JournalEvent =
  | (EventBase & {
      kind: 'turn/begin'
      session: string
      subjectId: string
      generation: number
      owner: string
    })
  | (EventBase & { kind: 'tool/call'; callId: string; name: string; arguments: string; generation: number })
  | (EventBase & { kind: 'approval/asked'; callId: string; name: string; reason: string; summary: string })
  | (EventBase & { kind: 'approval/decided'; callId: string; decision: ApprovalDecision })
  | (EventBase & {
      kind: 'tool/result'
      callId: string
      status: OutcomeStatus
      code?: OutcomeCode
      policy?: DenialPolicy
      content: ContentBlock[]
      durationMs: number
    })
  | (EventBase & { kind: 'turn/end'; reason: 'ended' | 'interrupted' })

export interface RepairReport {
  /** `tool/result` events written with `OUTCOME_UNKNOWN`. */
  readonly results: number
  /** Turns closed as interrupted. */
  readonly turns: number
}

/**
 * The journal seam. `append` resolves only once the event is durable (for durable stores) and
 * rejects with a `SeamError` `JOURNAL_DUPLICATE` when `(turnId, callId, kind)` already exists for a
 * call event, or `(turnId, kind)` for a turn event. Stores never throw past a closed root.
 */
export interface JournalStore {
  /** `'memory' | 'sqlite' | 'postgres'`, or a custom store's name. */
  readonly kind: string
  /** Where it lives (a file path, a redacted URL), for banners and errors. */
  readonly location: string
  append(event: JournalEvent): Promise<void>
  /** The events of one turn, in sequence order. */
  read(turnId: string): Promise<JournalEvent[]>
  /** The last `limit` events across turns, oldest first. */
  tail(limit: number): Promise<JournalEvent[]>
  /** Closes every `tool/call` without a `tool/result` (`OUTCOME_UNKNOWN`) and every open turn. */
  repair(): Promise<RepairReport>
  close(): Promise<void>
}

import type { OutcomeCode } from '../errors.js'
import type { ContentBlock } from './content.js'
import type { JournalCoordination } from './coordination.js'

export type JournalEventKind =
  | 'turn/begin'
  | 'tool/call'
  | 'approval/asked'
  | 'approval/decided'
  | 'tool/result'
  | 'turn/end'
  | 'question/asked'
  | 'question/answered'

export type { ContentBlock }

/** A place in a source file; line and column are 1-based. */
export interface SourceLocation {
  readonly file: string
  readonly line: number
  readonly column: number
}

export type OutcomeStatus = 'completed' | 'denied' | 'failed' | 'cancelled'
export type DenialPolicy = 'permission' | 'hook' | 'approval' | 'guard'
/** Why a question was answered without a person's answer (see `question/answered`). */
export type QuestionReason = 'unattended' | 'no-port' | 'timeout' | 'aborted' | 'invalid' | 'failed'
export type ApprovalDecision = 'allowed-once' | 'allowed-session' | 'rejected' | 'unavailable' | 'timeout' | 'cancelled'

interface EventBase {
  readonly turnId: string
  /** Per-turn sequence, assigned by the turn (1, 2, 3 …); `(turnId, seq)` is unique. */
  readonly seq: number
  /** Epoch milliseconds. */
  readonly at: number
  /**
   * The host id of the store that wrote the event, stamped by the durable stores (`hostname:pid` by
   * default); crash repair uses it to tell a live writer from a dead one. Missing on older rows.
   */
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
  | (EventBase & {
      kind: 'tool/call'
      callId: string
      name: string
      arguments: string
      generation: number
      /** A nested call's outer call id (a tool body's `ctx.tools.call`, a Code Mode sub-call); absent on a model's call. */
      parent?: string
    })
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
      /** Where in a tool file the error of a failed call was thrown (source-mapped), when known. */
      location?: SourceLocation
      /** A nested call's outer call id, as on its `tool/call`. */
      parent?: string
      /** When the body started (epoch ms), for a call whose body ran; the call began `durationMs` before `at`. */
      bodyAt?: number
      /** How long the body ran (until it settled or was abandoned), with `bodyAt`. */
      bodyMs?: number
    })
  | (EventBase & { kind: 'turn/end'; reason: 'ended' | 'interrupted' })
  /**
   * A running call asked a question (`ctx.ask`); `schema` is its JSON text. Unique per `(turn, call,
   * questionId)`. A request to the client instead (`ctx.sample`, `ctx.roots`) names its `method`:
   * `message` is then a short summary (a sample's first text, redacted) and `schema` its other params.
   */
  | (EventBase & { kind: 'question/asked'; callId: string; questionId: string; name: string; message: string; schema: string; method?: ClientMethod })
  /**
   * Its answer. `content` (JSON text, redacted as arguments are) with `accept`; `reason` when no
   * person answered: `unattended`, `no-port`, `timeout`, `aborted`, `invalid` (content that does
   * not match), `failed` (the port threw).
   */
  | (EventBase & { kind: 'question/answered'; callId: string; questionId: string; action: 'accept' | 'decline' | 'cancel'; content?: string; reason?: QuestionReason })

/** A request a running call sends its client besides a question (`question/asked`'s `method`). */
export type ClientMethod = 'sampling/createMessage' | 'roots/list'

/** Which owners `repair` may treat as gone besides dead processes of this machine; see `JournalStore.repair`. */
export type RepairHosts = 'dead-local' | 'all'

export interface RepairOptions {
  /**
   * `'dead-local'` (default): close only what dead processes of this machine, and rows without a
   * host, left open. `'all'` also closes what other machines left open, whose processes cannot be
   * checked from here: only for an operator who knows those hosts are stopped for good.
   */
  readonly hosts?: RepairHosts
}

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
  /**
   * Crash repair: closes `tool/call`s without a `tool/result` (writing `OUTCOME_UNKNOWN`) and turns
   * without a `turn/end` (writing `interrupted`), but only those whose writer is gone, since several
   * live processes may share one journal. The writer is the host of the `tool/call` or `turn/begin`:
   * gone when it has no host (older rows), or is `hostname:pid` of this machine with no such process,
   * or is this store's own host id on events older than this process. What other machines left stays
   * open: each machine repairs its own dead processes when a process of it next opens the journal,
   * or an operator passes `hosts: 'all'`. Repairs run twice, or by several hosts at once, still
   * write one result per call; the counts are what this repair wrote.
   */
  repair(options?: RepairOptions): Promise<RepairReport>
  /**
   * A page of turns, newest first (in the order their `turn/begin` was stored), matching every
   * filter given; `next` pages on while more match. Answered from the store's indexes, never by
   * loading the journal: a page costs the same on a journal of a million events.
   */
  turns(query?: TurnQuery): Promise<TurnPage>
  /**
   * Parked calls, decisions, idempotency keys, session grants and host heartbeats: the claims that
   * must happen once across every process sharing this journal (see `JournalCoordination`).
   */
  readonly coordination: JournalCoordination
  close(): Promise<void>
  /**
   * Optional, for instrumentation: `listener` hears the number of events of each commit a store
   * shares among concurrent appends (group commit). Returns a disposer.
   */
  onCommit?(listener: (events: number) => void): () => void
}

/** Filters of `JournalStore.turns`; a turn matches when it matches every one given. */
export interface TurnQuery {
  readonly session?: string
  /** Turns with at least one call of this tool. */
  readonly tool?: string
  /** Turns with at least one result of this status. */
  readonly status?: OutcomeStatus
  /** Turns with at least one result of this code (`OUTCOME_UNKNOWN`, `DENIED` …). */
  readonly code?: string
  /** Turns begun by this host id. */
  readonly host?: string
  /** Turns per page: default 50, at most 500. */
  readonly limit?: number
  /** `TurnPage.next` of the previous page; opaque. */
  readonly before?: string
}

/** One turn as a list shows it, from its `turn/begin`, its `turn/end` and its number of calls. */
export interface TurnSummary {
  readonly turnId: string
  readonly session: string
  readonly subjectId: string
  readonly owner: string
  readonly generation: number
  readonly host?: string
  readonly begunAt: number
  readonly endedAt?: number
  readonly endReason?: 'ended' | 'interrupted'
  readonly calls: number
  /** The distinct tool names its calls asked for, in the order first asked (at most `TURN_TOOLS_SHOWN`). */
  readonly tools: readonly string[]
  /** How many of its calls settled with each status; `calls` minus their sum are still open (running or parked). */
  readonly outcomes: Readonly<Partial<Record<OutcomeStatus, number>>>
}

export interface TurnPage {
  readonly turns: TurnSummary[]
  /** The cursor of the next (older) page; missing on the last page. */
  readonly next?: string
}

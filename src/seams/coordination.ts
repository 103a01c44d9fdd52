import { type ApprovalAnswer, offeredAnswers } from './approval.js'
import type { ContentBlock } from './content.js'

/**
 * What several processes sharing one journal must agree on, and the one rule that makes each
 * happen once: every claim is a single conditional write the store itself decides (a unique key, or
 * an `UPDATE … WHERE <still unclaimed>`), so whichever process's write lands first wins and every
 * other sees that it lost. No claim relies on a lock held in a process. The claims are:
 * - **park**: a call waiting for a person is one row per `(turnId, callId, round)`, found by its
 *   token. A round is voided (and the next round parked) when the tool changed before the resume.
 * - **decide**: a round's decision is set only while it has none, is unsettled and its deadline
 *   (`askedAfter`) has not passed: the first wins, and a decision after the deadline is refused.
 * - **expire**: a round is settled as expired only while it is unsettled, undecided and past its
 *   deadline: the same row condition as decide's, so of a decision and an expiry racing exactly one
 *   lands, and a decision that landed is honoured.
 * - **settle**: a round is settled (resumed, expired or voided) only while unsettled: exactly one
 *   process resumes or expires it, and only it writes the call's `approval/decided` and
 *   `tool/result`, at the seqs the turn reserved when it parked the call.
 * - **idempotency key**: a key is held by the first call that inserts it; that call's completed
 *   result is stored with it and replayed to every later call with the key. A call that does not
 *   complete releases the key, so the next call with it runs; a call crash repair closes keeps it
 *   (it may have run), and only a call whose tool reruns after an unknown outcome releases it.
 * - **session grant**: one row per `(session, subject, source, fingerprint)`; a changed tool has
 *   another fingerprint, so its grants no longer match anywhere.
 * - **heartbeat**: one row per host; a host whose last beat is older than its lease is dead, and
 *   crash repair (on any live host) closes what it left open, each call once by the unique indexes.
 */
export interface JournalCoordination {
  /** The host id this store stamps on its events: the one its claims are made as. */
  readonly host: string
  /** Parks one round of a call; `JOURNAL_DUPLICATE` when that round or token already exists. */
  park(call: ParkedCall): Promise<void>
  /** Parked rounds matching `query`, oldest first; unsettled ones only unless `settled: true`. */
  parked(query?: ParkedQuery): Promise<ParkedCall[]>
  /**
   * Records `decision` on the round with `token` if it has none, is unsettled and was asked at or
   * after `askedAfter` (default: any time); `undefined` for an unknown token.
   */
  decide(token: string, decision: ParkedDecision, askedAfter?: number): Promise<Claimed | undefined>
  /**
   * Settles the round with `token` as expired (`kind: 'expire'`) if it is unsettled, undecided and
   * was asked before `askedBefore`; `undefined` for an unknown token.
   */
  expire(token: string, expiry: { readonly host: string; readonly at: number }, askedBefore: number): Promise<Claimed | undefined>
  /** Settles the round with `token` if it is unsettled; `undefined` for an unknown token. */
  settle(token: string, settlement: ParkedSettlement): Promise<Claimed | undefined>
  /** Claims `key` for `holder` unless another holds it; resolves with the claim as stored. */
  claimKey(key: string, holder: KeyHolder): Promise<KeyClaim>
  /** The claim on `key`, if any. */
  readKey(key: string): Promise<KeyClaim | undefined>
  /** Stores the completed result on `key`, if `holder` still holds it. */
  completeKey(key: string, holder: KeyHolder, result: StoredResult): Promise<void>
  /** Drops the claim on `key`, if `holder` still holds it and it has no result. */
  releaseKey(key: string, holder: KeyHolder): Promise<void>
  grant(grant: SessionGrant): Promise<void>
  hasGrant(grant: SessionGrant): Promise<boolean>
  /** The standing session grants matching `query`, oldest first. */
  grants(query?: GrantQuery): Promise<StoredGrant[]>
  /** Drops the grants of `query.session` (only those matching the rest of `query`); resolves with how many went. */
  revokeGrants(query: GrantQuery & { readonly session: string }): Promise<number>
  /**
   * Records that `host` is alive now, with the lease after which it counts as dead; rejects with
   * `HOST_FENCED` once another host fenced that lease (crash repair fences every host past its
   * lease before it closes what that host left open). A store's first beat of its own host
   * registers its lease; from then on every write it makes is refused once the lease is fenced.
   */
  heartbeat(host: string, leaseMs: number): Promise<void>
  /** Forgets `host`'s heartbeat (a clean shutdown). */
  retire(host: string): Promise<void>
  /** Stores a new task (an MCP task: a call that outlives its request); `JOURNAL_DUPLICATE` when its id exists. */
  createTask(task: StoredTask): Promise<void>
  /** The task with `taskId`, if stored. */
  readTask(taskId: string): Promise<StoredTask | undefined>
  /**
   * Changes the task with `taskId` to `change` if it is not settled (`completed`, `failed` or
   * `cancelled`): a settled task never changes again, so of a result and a cancel racing exactly
   * one lands. `expect`, when given, is the status it must still have, or a `TaskExpect`. Whether
   * it changed.
   */
  updateTask(taskId: string, change: TaskChange, expect?: TaskStatus | TaskExpect): Promise<boolean>
}

/** Where an MCP task is: running, waiting for its client's input, or settled (the last three). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

/** A task's status is settled: it never changes again. */
export function isSettledTask(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled'
}

/** What a task's state says besides its status: plain JSON, as the wire and the store carry it. */
export type TaskState = Readonly<Record<string, unknown>>

/** One task as the journal holds it, for any host on the journal to answer for it. */
export interface StoredTask {
  readonly taskId: string
  /** The seam session its call runs in, and the principal it runs as. */
  readonly session: string
  readonly subjectId: string
  readonly status: TaskStatus
  /** Epoch ms. */
  readonly createdAt: number
  readonly updatedAt: number
  /** How long after its creation the task may be asked about. */
  readonly ttlMs: number
  /** The status's details (result, error, input requests, the parked call it waits on). */
  readonly state: TaskState
}

/**
 * What a task must still be for `updateTask` to change it. `updatedAt` makes the change a
 * compare-and-set: a host that read the task and changes it from what it read expects that read's
 * `updatedAt`, so a change another host made meanwhile refuses it (it reads again and retries), and
 * it writes an `at` above the `updatedAt` it read, so no two changes leave the same one.
 */
export interface TaskExpect {
  readonly status?: TaskStatus
  readonly updatedAt?: number
}

/** `updateTask`'s `expect`, as one shape. */
export function taskExpect(expect: TaskStatus | TaskExpect | undefined): TaskExpect {
  return typeof expect === 'string' ? { status: expect } : (expect ?? {})
}

export interface TaskChange {
  readonly status: TaskStatus
  readonly state: TaskState
  readonly at: number
}

/** One round of a parked call: everything another process needs to list, decide and resume it. */
export interface ParkedCall {
  readonly turnId: string
  readonly callId: string
  /** 1 for the first question; one more each time a changed tool voids the decision. */
  readonly round: number
  /** Opaque and unique: what `resume(token)` takes. */
  readonly token: string
  readonly name: string
  /** The validated arguments as JSON text, unredacted: a resume runs the body with exactly these. */
  readonly arguments: string
  /** Readable, with secrets redacted. */
  readonly summary: string
  readonly reason: string
  /**
   * The answers the question offered (`ApprovalRequest.answers`), in the order once, session,
   * reject: a decision must be one of them. Kept in the stored call document, so no schema change
   * came with it; a round parked by a build that did not record them reads as all three, which is
   * what such a build offered.
   */
  readonly answers: readonly ApprovalAnswer[]
  readonly session: string
  readonly subjectId: string
  readonly roles: readonly string[]
  readonly owner: string
  readonly origin?: { readonly kind: string; readonly platform?: string; readonly scope?: 'private' | 'group' | 'channel' }
  /** The generation the call was asked in. */
  readonly generation: number
  /** The tool as it was asked about: a resume against another fingerprint voids the decision. */
  readonly source: string
  readonly fingerprint: string
  /** Seqs of the call's turn kept free for the `approval/decided` and `tool/result` that settle it. */
  readonly decidedSeq: number
  readonly resultSeq: number
  /** Epoch milliseconds. */
  readonly askedAt: number
  /**
   * When its decision deadline passes (epoch ms): `askedAt` plus the parking host's
   * `approvalTtlMs`. Kept in the stored call document; absent on a round parked by an earlier
   * build, whose deadline is then the deciding host's TTL.
   */
  readonly expiresAt?: number
  /** The host that parked it. */
  readonly host: string
  readonly decision?: ParkedDecision
  readonly settled?: ParkedSettlement
  /**
   * Set when the call is a Code Mode run parked for one of its sub-calls: `name`, `arguments`,
   * `reason`, `fingerprint` and `source` above are then the sub-call's, what a person decides. Kept
   * in the stored call document, as `answers` is.
   */
  readonly code?: CodeRound
}

/** What resuming a parked Code Mode run needs: the program, its sub-calls so far, and what it read. */
export interface CodeRound {
  /** The outer call's tool (`run_code`) and its arguments as JSON text (the program). */
  readonly tool: string
  readonly arguments: string
  /** The sub-call waiting for the decision: its 0-based place in the program's sub-calls, and its call id. */
  readonly index: number
  readonly subCallId: string
  /** The seq of the turn kept for the waiting sub-call's `tool/result` (before `resultSeq`). */
  readonly subResultSeq: number
  /** `Date.now()` and `Math.random()` as the program read them, handed back in the same order on resume. */
  readonly recorded: { readonly now: readonly number[]; readonly random: readonly number[] }
  /**
   * The program's sub-calls in issue order up to the waiting one: tool, arguments as JSON text, and
   * how it settled (absent for the waiting one and any not yet run). A resume answers these from
   * here and never runs their bodies again; a program asking another tool or arguments diverged.
   */
  readonly calls: readonly CodeSubCall[]
}

export interface CodeSubCall {
  readonly name: string
  readonly arguments: string
  readonly answer?: { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly code: string; readonly message: string }
}

export interface ParkedDecision {
  readonly answer: ApprovalAnswer
  /** Who decided (a person, an operator id). */
  readonly by: string
  readonly at: number
  readonly host: string
}

export interface ParkedSettlement {
  /** `resume` runs the rest of the call; `expire` settles it `APPROVAL_TIMEOUT`; `void` parks the next round. */
  readonly kind: 'resume' | 'expire' | 'void' | 'reject'
  readonly host: string
  readonly at: number
}

export interface ParkedQuery {
  readonly token?: string
  readonly turnId?: string
  readonly callId?: string
  readonly session?: string
  readonly subjectId?: string
  /** Parked before this time (epoch ms): candidates for expiry. */
  readonly askedBefore?: number
  /** Include settled rounds too (default: only those still waiting). */
  readonly settled?: boolean
}

/** The outcome of a conditional write: whether this process's write won, and the row as it stands. */
export interface Claimed {
  readonly won: boolean
  readonly call: ParkedCall
}

export interface KeyHolder {
  readonly turnId: string
  readonly callId: string
  readonly host: string
}

export interface KeyClaim extends KeyHolder {
  readonly key: string
  readonly at: number
  readonly result?: StoredResult
}

/** A completed result as an idempotency key keeps it, for replay. */
export interface StoredResult {
  readonly content: readonly ContentBlock[]
  /** Present when the tool produced a value. */
  readonly value?: unknown
}

export interface SessionGrant {
  readonly session: string
  readonly subjectId: string
  readonly source: string
  readonly fingerprint: string
}

/** A session grant as a store keeps it: with when it was given (epoch ms). */
export interface StoredGrant extends SessionGrant {
  readonly at: number
}

/** Which grants: every field given must match exactly. */
export interface GrantQuery {
  readonly session?: string
  readonly subjectId?: string
  readonly source?: string
  readonly fingerprint?: string
}

/** Whether a grant matches a query (the memory store's filter; the SQL stores say the same in SQL). */
export function matchesGrant(grant: SessionGrant, query: GrantQuery): boolean {
  return (
    (query.session === undefined || grant.session === query.session) &&
    (query.subjectId === undefined || grant.subjectId === query.subjectId) &&
    (query.source === undefined || grant.source === query.source) &&
    (query.fingerprint === undefined || grant.fingerprint === query.fingerprint)
  )
}

/** Heartbeats the stores keep: `host` → its last beat and lease, read by crash repair. */
export interface HostBeat {
  readonly host: string
  readonly beatAt: number
  readonly leaseMs: number
  /** Another host fenced this one's lease: it is gone, whatever its last beat. */
  readonly fenced?: boolean
}

/** Whether two holders are the same call on the same host. */
export function sameHolder(a: KeyHolder, b: KeyHolder): boolean {
  return a.turnId === b.turnId && a.callId === b.callId && a.host === b.host
}

/**
 * A round as a store hands it out: frozen, with its decision and settlement when it has them, and
 * its offered answers in order (all three for a round stored without them, by an earlier build).
 */
export function storedRound(call: ParkedCall, decision?: ParkedDecision | null, settled?: ParkedSettlement | null): ParkedCall {
  return Object.freeze({
    ...call,
    answers: offeredAnswers((call as { answers?: readonly ApprovalAnswer[] }).answers),
    ...(decision == null ? {} : { decision }),
    ...(settled == null ? {} : { settled }),
  })
}

/** Whether a round matches a query (the memory store's filter; the SQL stores say the same in SQL). */
export function matchesParked(call: ParkedCall, query: ParkedQuery): boolean {
  return (
    (query.settled === true || call.settled === undefined) &&
    (query.token === undefined || call.token === query.token) &&
    (query.turnId === undefined || call.turnId === query.turnId) &&
    (query.callId === undefined || call.callId === query.callId) &&
    (query.session === undefined || call.session === query.session) &&
    (query.subjectId === undefined || call.subjectId === query.subjectId) &&
    (query.askedBefore === undefined || call.askedAt < query.askedBefore)
  )
}

import { SeamError } from '../../errors.js'
import type { ApprovalAnswer } from '../../seams/approval.js'
import type { ParkedCall } from '../../seams/coordination.js'
import { redactArguments } from '../base/privacy.js'
import type { JournalStore } from '../../seams/journal.js'

/** One parked call as `root.approvals.pending()` lists it: what a person needs to decide it. */
export interface PendingApproval {
  readonly callId: string
  readonly turnId: string
  /**
   * What `turn.tools.resume` / `root.resume` take once it is decided. Present only when the listing
   * was made `as` the call's own principal or an operator (see `PendingQuery.as`).
   */
  readonly resumeToken?: string
  readonly tool: string
  /** One readable line, secrets redacted. */
  readonly summary: string
  /** Why it needs approval. */
  readonly reason: string
  /** The frozen arguments the body will run with, values under secret-looking keys redacted. */
  readonly arguments: Readonly<Record<string, unknown>>
  readonly session: string
  /** The `subjectId` of the principal whose call it is. */
  readonly principal: string
  /** When it was parked (epoch ms), and by which host. */
  readonly askedAt: number
  readonly host: string
  /** 1, or more when a changed tool voided an earlier decision and the person is asked again. */
  readonly round: number
  /**
   * The answers its question offers, in the order once, session, reject: `decide` takes no other.
   * A call parked by a build that did not record them offers all three.
   */
  readonly answers: readonly ApprovalAnswer[]
  /** Present once decided and until it is resumed. */
  readonly decision?: { readonly answer: ApprovalAnswer; readonly by: string; readonly at: number }
}

export interface PendingQuery {
  readonly session?: string
  /** Only the calls of this principal (a `subjectId`, or a principal). */
  readonly principal?: string | { readonly subjectId: string }
  /**
   * Who is looking (default: `principal`): a call's resume token is listed only to its own
   * principal or an operator (`createRoot({ operators })`). Everyone else sees the call without it.
   */
  readonly as?: string | { readonly subjectId: string }
}

/** A `subjectId`, or a principal's. */
export function subjectOf(principal: string | { readonly subjectId: string } | undefined): string | undefined {
  return typeof principal === 'string' || principal === undefined ? principal : principal.subjectId
}

export interface DecideOptions {
  /** Who decided (a person, an operator id): recorded with the decision. */
  readonly by: string
  /** The call's turn, when its call id is parked in several turns. */
  readonly turnId?: string
  /** Who is asking: the returned call carries its resume token only if they may resume it (as in `pending`). */
  readonly as?: string | { readonly subjectId: string }
  /**
   * A rejected Code Mode run waits for its resume by default, which runs its program again with the
   * waiting sub-call rejected (`DENIED`), so the program may catch it. `close: true` settles the run
   * `DENIED` now instead, without running its program again (a cancelled task, say). Any other
   * rejected call settles now either way.
   */
  readonly close?: boolean
}

const ANSWERS: ReadonlySet<string> = new Set<ApprovalAnswer>(['allowed-once', 'allowed-session', 'rejected'])

/** Writes the `approval/decided` and `tool/result` that settle a round nothing will run. */
export type SettleRound = (journal: JournalStore, round: ParkedCall, decision: 'rejected' | 'timeout') => Promise<void>

/**
 * Parked calls in the journal, for any process that shares it: list them, decide them (the first
 * decision wins across processes), and expire those older than `approvalTtlMs`. Resuming an allowed
 * call is `turn.tools.resume(token)` or `root.resume(token)`; a rejection settles the call here
 * (`DENIED`, policy `approval`) without running anything, except a Code Mode run's, which is resumed
 * like an allowed one so its program sees the rejection (see `DecideOptions.close`).
 */
export class Approvals {
  readonly #journal: JournalStore
  readonly #ttlMs: number
  readonly #operators: ReadonlySet<string>
  readonly #settle: SettleRound

  /**
   * `operators`: the `subjectId`s that may see and resume every parked call, not only their own.
   * `settle` writes what settles a rejected or expired round (the pipeline's `writeSettlement`).
   */
  constructor(journal: JournalStore, ttlMs: number, operators: Iterable<string>, settle: SettleRound) {
    this.#journal = journal
    this.#settle = settle
    this.#ttlMs = ttlMs
    this.#operators = new Set(operators)
  }

  /** Whether `subjectId` is an operator: it may see and resume any parked call. */
  isOperator(subjectId: string | undefined): boolean {
    return subjectId !== undefined && this.#operators.has(subjectId)
  }

  /**
   * Parked calls still waiting (undecided, or decided and not yet resumed), oldest first; expired
   * ones are settled first. Resume tokens only on the calls `query.as` (else `query.principal`) may
   * resume: its own, or every one for an operator.
   */
  async pending(query: PendingQuery = {}): Promise<PendingApproval[]> {
    await this.expire()
    const subjectId = subjectOf(query.principal)
    const viewer = subjectOf(query.as) ?? subjectId
    const rounds = await this.#journal.coordination.parked({ session: query.session, subjectId })
    return rounds.map((round) => pendingOf(round, this.#mayResume(viewer, round)))
  }

  #mayResume(viewer: string | undefined, round: ParkedCall): boolean {
    return viewer !== undefined && (viewer === round.subjectId || this.#operators.has(viewer))
  }

  /**
   * Records `answer` by `by` on the parked call with this call id (or resume token). The first
   * decision wins: a call decided or settled already throws `APPROVAL_CONFLICT` naming the decision
   * that stands. An answer the call did not offer (see `PendingApproval.answers`) throws
   * `INVALID_CALL` and leaves it waiting. A call id parked in several turns needs `turnId`.
   * Rejection settles the call now, except a Code Mode run's (see `DecideOptions.close`). A call past its decision deadline (`approvalTtlMs` after it was
   * asked) throws `APPROVAL_EXPIRED` and is settled `APPROVAL_TIMEOUT`; a decision that returned is
   * honoured: expiry no longer touches the call.
   */
  async decide(id: string, answer: ApprovalAnswer, options: DecideOptions): Promise<PendingApproval> {
    if (!ANSWERS.has(answer)) throw new SeamError('INVALID_CALL', `an approval answer is one of ${[...ANSWERS].join(', ')}, got ${String(answer)}`)
    if (typeof options?.by !== 'string' || options.by.trim() === '') throw new SeamError('INVALID_CALL', 'decide needs `by`: who decided')
    const round = await this.#find(id, options.turnId)
    // Every way to decide a parked call (console, CLI, an MCP retry, the API) comes through here.
    if (!round.answers.includes(answer)) throw notOffered(round, answer)
    const coordination = this.#journal.coordination
    // The deadline is part of the claim itself (the row's `asked_at`), so a decision and an expiry
    // racing on any host cannot both land.
    const now = Date.now()
    const claim = await coordination.decide(round.token, { answer, by: options.by, at: now, host: coordination.host }, now - this.#ttlOf(round))
    if (claim === undefined) throw unknown(id)
    if (!claim.won) {
      if (claim.call.decision === undefined && (claim.call.settled === undefined || claim.call.settled.kind === 'expire')) {
        await this.#expireRound(claim.call, now - this.#ttlOf(claim.call))
        throw expired(claim.call)
      }
      throw conflict(claim.call)
    }
    if (answer === 'rejected' && (round.code === undefined || options.close === true)) {
      const settled = await coordination.settle(round.token, { kind: 'reject', host: coordination.host, at: Date.now() })
      if (settled?.won) await this.#settle(this.#journal, settled.call, 'rejected')
    }
    return pendingOf(claim.call, this.#mayResume(subjectOf(options.as), claim.call))
  }

  /**
   * Settles every undecided parked call past its deadline as `APPROVAL_TIMEOUT`: once this host's
   * `approvalTtlMs` and the call's own (its parking host's) have both passed since it was asked, so
   * no call expires before its own deadline. Each is claimed first, so of several hosts sweeping at
   * once exactly one writes its result; a call decided in time is left for its resume. Resolves
   * with how many this process settled.
   */
  async expire(now = Date.now()): Promise<number> {
    let count = 0
    for (const round of await this.#journal.coordination.parked({ askedBefore: now - this.#ttlMs })) {
      const askedBefore = now - Math.max(this.#ttlMs, this.#ttlOf(round))
      if (round.decision === undefined && (await this.#expireRound(round, askedBefore))) count += 1
    }
    return count
  }

  /** Claims `round`'s expiry (if it was asked before `askedBefore` and is still undecided) and writes its result. */
  async #expireRound(round: ParkedCall, askedBefore: number): Promise<boolean> {
    const coordination = this.#journal.coordination
    const claim = await coordination.expire(round.token, { host: coordination.host, at: Date.now() }, askedBefore)
    if (!claim?.won) return false
    await this.#settle(this.#journal, claim.call, 'timeout')
    return true
  }

  /** The round's own TTL as its parking host set it, else this one's. */
  #ttlOf(round: ParkedCall): number {
    return round.expiresAt === undefined ? this.#ttlMs : round.expiresAt - round.askedAt
  }

  /** The waiting round with this token or call id. */
  async #find(id: string, turnId: string | undefined): Promise<ParkedCall> {
    if (typeof id !== 'string' || id === '') throw new SeamError('INVALID_CALL', 'decide needs a call id or a resume token')
    const coordination = this.#journal.coordination
    const [byToken] = await coordination.parked({ token: id, settled: true })
    if (byToken !== undefined) {
      if (byToken.settled !== undefined || byToken.decision !== undefined) throw conflict(byToken)
      return byToken
    }
    const waiting = await coordination.parked({ callId: id, turnId })
    if (waiting.length > 1 && new Set(waiting.map((round) => round.turnId)).size > 1) {
      throw new SeamError('INVALID_CALL', `call id "${id}" is parked in ${waiting.length} turns; pass its turnId or its resume token`, {
        details: { callId: id, turnIds: waiting.map((round) => round.turnId) },
      })
    }
    const round = waiting.at(-1)
    if (round !== undefined) return round
    const settled = (await coordination.parked({ callId: id, turnId, settled: true })).at(-1)
    throw settled === undefined ? unknown(id) : conflict(settled)
  }
}

function pendingOf(round: ParkedCall, withToken: boolean): PendingApproval {
  let args: Record<string, unknown>
  try {
    args = JSON.parse(redactArguments(round.arguments)) as Record<string, unknown>
  } catch {
    args = {}
  }
  return Object.freeze({
    callId: round.callId,
    turnId: round.turnId,
    ...(withToken ? { resumeToken: round.token } : {}),
    tool: round.name,
    summary: round.summary,
    reason: round.reason,
    arguments: Object.freeze(args),
    session: round.session,
    principal: round.subjectId,
    askedAt: round.askedAt,
    host: round.host,
    round: round.round,
    answers: round.answers,
    ...(round.decision === undefined ? {} : { decision: Object.freeze({ answer: round.decision.answer, by: round.decision.by, at: round.decision.at }) }),
  })
}

function unknown(id: string): SeamError {
  return new SeamError('UNKNOWN_APPROVAL', `no parked call has the call id or resume token "${id}"`, {
    details: { id },
    hint: 'list parked calls with root.approvals.pending() or `seam approvals`',
  })
}

function notOffered(round: ParkedCall, answer: ApprovalAnswer): SeamError {
  return new SeamError('INVALID_CALL', `the call "${round.callId}" to ${round.name} offers ${round.answers.join(' or ')}, not ${answer}; it is still waiting`, {
    details: { callId: round.callId, turnId: round.turnId, tool: round.name, answer, answers: round.answers },
    hint: `decide it with ${round.answers.join(' or ')}`,
  })
}

function expired(round: ParkedCall): SeamError {
  return new SeamError('APPROVAL_EXPIRED', `the call "${round.callId}" to ${round.name} passed its decision deadline and expired; nothing runs`, {
    details: { callId: round.callId, turnId: round.turnId, askedAt: round.askedAt, ...(round.expiresAt === undefined ? {} : { expiresAt: round.expiresAt }) },
    hint: 'ask for the call again',
  })
}

function conflict(round: ParkedCall): SeamError {
  if (round.settled?.kind === 'expire' && round.decision === undefined) return expired(round)
  const decided = round.decision ? `${round.decision.answer} by ${round.decision.by}` : undefined
  const settled = round.settled ? ({ resume: 'resumed', reject: 'rejected', expire: 'expired', void: 'voided' } as const)[round.settled.kind] : undefined
  const what = [decided && `was already decided (${decided})`, settled && `was ${settled}`].filter(Boolean).join(' and ')
  return new SeamError('APPROVAL_CONFLICT', `the call "${round.callId}" to ${round.name} ${what}; the first decision stands`, {
    details: { callId: round.callId, turnId: round.turnId, decision: round.decision, settled: round.settled },
  })
}

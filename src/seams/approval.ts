/** The answer a person gives to one approval question. */
export type ApprovalAnswer = 'allowed-once' | 'allowed-session' | 'rejected'

/** Every answer, for a request that does not say which it offers. */
export const ALL_ANSWERS: readonly ApprovalAnswer[] = Object.freeze(['allowed-once', 'allowed-session', 'rejected'])

/** The answers of `offered` in the order once, session, reject (all three when `undefined`). */
export function offeredAnswers(offered: readonly ApprovalAnswer[] | undefined): readonly ApprovalAnswer[] {
  return offered === undefined ? ALL_ANSWERS : ALL_ANSWERS.filter((answer) => offered.includes(answer))
}

/**
 * What an `ApprovalPort` may reply: an answer now, or `'deferred'` when no one can answer now. A
 * deferred call is parked in the journal (`status: 'suspended'`, code `APPROVAL_PENDING`) until
 * someone decides it through `root.approvals` and it is resumed with its `resumeToken`.
 */
export type ApprovalReply = ApprovalAnswer | 'deferred'

export interface ApprovalRequest {
  readonly callId: string
  readonly name: string
  /** Frozen, validated arguments. */
  readonly arguments: Readonly<Record<string, unknown>>
  /** One readable line: `write_file path="notes.md" content="…" (52 bytes)`. */
  readonly summary: string
  readonly reason: string
  readonly session: string
  /**
   * The answers that mean something for this call, to offer and no others: `allowed-session` only
   * where a session grant skips later questions (an `on-risk` tool); an `always` tool or a hook's
   * ask offers `allowed-once` and `rejected`; a `once` tool, whose yes holds for the session,
   * `allowed-session` and `rejected`. Another allow is recorded as the one offered. Always set by
   * the runtime; a port treats its absence as all three.
   */
  readonly answers?: readonly ApprovalAnswer[]
  readonly signal: AbortSignal
}

/** One-shot human approval. Absent, unattended, throwing or invalid answers fail closed. */
export interface ApprovalPort {
  readonly available?: boolean
  request(request: ApprovalRequest): Promise<ApprovalReply>
}

/**
 * The approval port for hosts where no person can answer while the call waits (a queue worker, an
 * unattended job, a chat whose user answers later): every request is deferred, so each call that
 * needs approval is parked in the journal for `root.approvals.decide` and `root.resume`.
 */
export function deferApprovals(): ApprovalPort {
  return DEFER_ALL
}

const DEFER_ALL: ApprovalPort = Object.freeze({ request: async (): Promise<ApprovalReply> => 'deferred' })

/** Grants a permission string to a principal (`permissions` on tools). */
export interface PermissionHost {
  check(permission: string, principal: { subjectId: string; roles: readonly string[] }): boolean | Promise<boolean>
}

/** The answer a person gives to one approval question. */
export type ApprovalAnswer = 'allowed-once' | 'allowed-session' | 'rejected'

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

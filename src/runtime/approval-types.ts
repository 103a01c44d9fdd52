/** The answer a person gives to one approval question. */
export type ApprovalAnswer = 'allowed-once' | 'allowed-session' | 'rejected'

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
  request(request: ApprovalRequest): Promise<ApprovalAnswer>
}

/** Grants a permission string to a principal (`permissions` on tools). */
export interface PermissionHost {
  check(permission: string, principal: { subjectId: string; roles: readonly string[] }): boolean | Promise<boolean>
}

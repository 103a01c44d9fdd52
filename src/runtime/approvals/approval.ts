import type { ApprovalPort, ApprovalReply, ApprovalRequest } from '../../seams/approval.js'
import type { JournalCoordination, SessionGrant } from '../../seams/coordination.js'
import type { ApprovalDecision } from '../../seams/journal.js'
import { redactSecrets } from '../base/privacy.js'
import { MAX_TIMER_MS } from '../base/deadlines.js'

const ANSWERS: ReadonlySet<string> = new Set(['allowed-once', 'allowed-session', 'rejected', 'deferred'])

/**
 * Session grants (`once` mode, or an `allowed-session` answer). A grant belongs to one principal in
 * one session (another user reusing the session id is asked again) and covers one tool as one source
 * offers it: a changed tool (name, description or input schema) has another fingerprint, and a
 * provider swapped in with the same signature is another source, so either asks again. With a
 * journal the grants live there alone and every question asks it, so a grant given on one host
 * holds on every host sharing it (and across restarts), and a grant revoked anywhere
 * (`revokeGrants`, `seam approvals --revoke`, a session's end) is gone everywhere at once. A journal
 * that fails to answer holds no grant (asked again: fail closed). Without one, this process keeps
 * them; `retain` forgets those for tools no generation projects anymore.
 */
export class ApprovalGrants {
  readonly #grants = new Map<string, Set<string>>()
  readonly #store: JournalCoordination | undefined

  constructor(store?: JournalCoordination) {
    this.#store = store
  }

  /** Synchronous without a journal; otherwise asks the journal (a failure is no grant). */
  has(turn: GrantHolder, tool: GrantedTool): boolean | Promise<boolean> {
    if (this.#store === undefined) return this.#grants.get(holderKey(turn))?.has(toolKey(tool)) === true
    return this.#store.hasGrant(grantOf(turn, tool)).catch(() => false)
  }

  /** Keeps the grant: in the journal when there is one (resolving once it holds it; a failure loses it), else here. */
  grant(turn: GrantHolder, tool: GrantedTool): Promise<void> | undefined {
    if (this.#store === undefined) {
      this.#remember(turn, tool)
      return undefined
    }
    return this.#store.grant(grantOf(turn, tool)).catch(() => undefined)
  }

  #remember(turn: GrantHolder, tool: GrantedTool): void {
    const holder = holderKey(turn)
    let set = this.#grants.get(holder)
    if (!set) {
      set = new Set()
      this.#grants.set(holder, set)
    }
    set.add(toolKey(tool))
  }

  /** Keeps only grants for the tools given (those the active generation projects). */
  retain(live: Iterable<GrantedTool>): void {
    if (this.#grants.size === 0) return
    const keys = new Set([...live].map(toolKey))
    for (const [holder, set] of this.#grants) {
      for (const key of set) if (!keys.has(key)) set.delete(key)
      if (set.size === 0) this.#grants.delete(holder)
    }
  }

  get size(): number {
    let n = 0
    for (const set of this.#grants.values()) n += set.size
    return n
  }
}

const grantOf = (turn: GrantHolder, tool: GrantedTool): SessionGrant => ({
  session: turn.session,
  subjectId: turn.principal.subjectId,
  source: tool.source,
  fingerprint: tool.fingerprint,
})

/** Who holds a grant: a session and the principal acting in it. */
export interface GrantHolder {
  readonly session: string
  readonly principal: { readonly subjectId: string }
}

/** What a grant covers: a tool's fingerprint and where it comes from. */
export interface GrantedTool {
  readonly source: string
  readonly fingerprint: string
}

const holderKey = (turn: GrantHolder) => JSON.stringify([turn.session, turn.principal.subjectId])
const toolKey = (tool: GrantedTool) => JSON.stringify([tool.source, tool.fingerprint])

/**
 * Asks the port once. `deferred` parks the call (the caller's concern). Every other answer besides
 * `allowed-*` is a denial: a missing or unavailable
 * port, a throw or an invalid answer is `unavailable`; the caller's abort is `cancelled`; no answer
 * within `timeoutMs` is `timeout`. `ended` (the turn's end) withdraws the question as `cancelled` too.
 */
export async function askApproval(
  port: ApprovalPort | undefined,
  request: Omit<ApprovalRequest, 'signal'>,
  signal: AbortSignal,
  timeoutMs: number,
  ended?: AbortSignal,
): Promise<{ decision: ApprovalDecision | 'deferred'; error?: string }> {
  if (!port || port.available === false || typeof port.request !== 'function') return { decision: 'unavailable' }
  if (signal.aborted || ended?.aborted) return { decision: 'cancelled' }
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const stop = new Promise<{ decision: ApprovalDecision | 'deferred' }>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error('approval timed out'))
      resolve({ decision: 'timeout' })
    }, Math.min(timeoutMs, MAX_TIMER_MS))
    onAbort = () => {
      controller.abort(signal.aborted ? signal.reason : new Error('the turn ended'))
      resolve({ decision: 'cancelled' })
    }
    signal.addEventListener('abort', onAbort, { once: true })
    ended?.addEventListener('abort', onAbort, { once: true })
  })
  const answered = (async () => {
    try {
      const answer: unknown = await port.request(Object.freeze({ ...request, signal: controller.signal }))
      if (typeof answer === 'string' && ANSWERS.has(answer)) return { decision: answer as ApprovalReply }
      return { decision: 'unavailable' as const, error: `the approval port gave an invalid answer: ${String(answer)}` }
    } catch (error) {
      if (controller.signal.aborted) return { decision: signal.aborted || ended?.aborted ? ('cancelled' as const) : ('timeout' as const) }
      return { decision: 'unavailable' as const, error: error instanceof Error ? error.message : String(error) }
    }
  })()
  try {
    return await Promise.race([answered, stop])
  } finally {
    clearTimeout(timer)
    if (onAbort) {
      signal.removeEventListener('abort', onAbort)
      ended?.removeEventListener('abort', onAbort)
    }
  }
}

/** One readable line: `write_file path="notes.md" content="Hello…" (2 args)`. */
export function summarize(name: string, args: Readonly<Record<string, unknown>>): string {
  // The journal's own rule for secrets: this summary is journaled in `approval/asked`.
  const parts = Object.entries(redactSecrets(args) as Record<string, unknown>).map(([key, value]) => {
    let shown = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
    if (shown.length > 60) shown = `${shown.slice(0, 57)}…`
    return `${key}=${shown}`
  })
  let line = parts.length > 0 ? `${name} ${parts.join(' ')}` : name
  if (line.length > 200) line = `${line.slice(0, 199)}…`
  return line
}

import type { ApprovalAnswer, ApprovalPort, ApprovalRequest } from './approval-types.js'
import type { ApprovalDecision } from './journal/types.js'
import { redactSecrets } from './journal/privacy.js'
import { MAX_TIMER_MS } from './pipeline/deadlines.js'

const ANSWERS: ReadonlySet<string> = new Set(['allowed-once', 'allowed-session', 'rejected'])

/**
 * Session grants (`once` mode, or an `allowed-session` answer), keyed by session and tool
 * fingerprint. A changed tool (name, description or input schema) has another fingerprint, so its
 * grant no longer applies; `retain` drops grants for fingerprints no generation projects anymore.
 */
export class ApprovalGrants {
  readonly #grants = new Map<string, Set<string>>()

  has(session: string, fingerprint: string): boolean {
    return this.#grants.get(session)?.has(fingerprint) ?? false
  }

  grant(session: string, fingerprint: string): void {
    let set = this.#grants.get(session)
    if (!set) {
      set = new Set()
      this.#grants.set(session, set)
    }
    set.add(fingerprint)
  }

  /** Keeps only grants whose fingerprint is still live. */
  retain(live: ReadonlySet<string>): void {
    for (const [session, set] of this.#grants) {
      for (const fingerprint of set) if (!live.has(fingerprint)) set.delete(fingerprint)
      if (set.size === 0) this.#grants.delete(session)
    }
  }

  get size(): number {
    let n = 0
    for (const set of this.#grants.values()) n += set.size
    return n
  }
}

/**
 * Asks the port once. Every answer other than `allowed-*` is a denial: a missing or unavailable
 * port, a throw or an invalid answer is `unavailable`; the caller's abort is `cancelled`; no answer
 * within `timeoutMs` is `timeout`.
 */
export async function askApproval(
  port: ApprovalPort | undefined,
  request: Omit<ApprovalRequest, 'signal'>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<{ decision: ApprovalDecision; error?: string }> {
  if (!port || port.available === false || typeof port.request !== 'function') return { decision: 'unavailable' }
  if (signal.aborted) return { decision: 'cancelled' }
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const stop = new Promise<{ decision: ApprovalDecision }>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error('approval timed out'))
      resolve({ decision: 'timeout' })
    }, Math.min(timeoutMs, MAX_TIMER_MS))
    onAbort = () => {
      controller.abort(signal.reason)
      resolve({ decision: 'cancelled' })
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
  const answered = (async () => {
    try {
      const answer: unknown = await port.request(Object.freeze({ ...request, signal: controller.signal }))
      if (typeof answer === 'string' && ANSWERS.has(answer)) return { decision: answer as ApprovalAnswer }
      return { decision: 'unavailable' as const, error: `the approval port gave an invalid answer: ${String(answer)}` }
    } catch (error) {
      if (controller.signal.aborted) return { decision: signal.aborted ? ('cancelled' as const) : ('timeout' as const) }
      return { decision: 'unavailable' as const, error: error instanceof Error ? error.message : String(error) }
    }
  })()
  try {
    return await Promise.race([answered, stop])
  } finally {
    clearTimeout(timer)
    if (onAbort) signal.removeEventListener('abort', onAbort)
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

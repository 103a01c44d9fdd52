import type {
  Claimed,
  HostBeat,
  JournalCoordination,
  KeyClaim,
  KeyHolder,
  ParkedCall,
  ParkedDecision,
  ParkedQuery,
  ParkedSettlement,
  GrantQuery,
  SessionGrant,
  StoredGrant,
  StoredResult,
  StoredTask,
  TaskChange,
  TaskExpect,
  TaskStatus,
} from '../../seams/coordination.js'
import { isSettledTask, matchesGrant, matchesParked, sameHolder, storedRound, taskExpect } from '../../seams/coordination.js'
import { duplicateError, taskDuplicateError } from './events.js'
import { fencedError } from './hosts.js'

/**
 * The coordination claims of a memory journal. Every method checks and writes in one synchronous
 * step, so within the one process that can share a memory journal each claim is decided once.
 */
export class MemoryCoordination implements JournalCoordination {
  readonly #parked = new Map<string, ParkedCall>()
  readonly #rounds = new Set<string>()
  readonly #keys = new Map<string, KeyClaim>()
  /** By `grantKey`, in the order given. */
  readonly #grants = new Map<string, StoredGrant>()
  readonly #beats = new Map<string, HostBeat & { fenced?: boolean }>()
  readonly #tasks = new Map<string, StoredTask>()
  readonly #check: () => void
  readonly #location: string
  readonly host: string

  /** `check` throws when the journal is closed or unavailable. */
  constructor(host: string, location: string, check: () => void) {
    this.host = host
    this.#location = location
    this.#check = check
  }

  async park(call: ParkedCall): Promise<void> {
    this.#check()
    const round = JSON.stringify([call.turnId, call.callId, call.round])
    if (this.#rounds.has(round) || this.#parked.has(call.token)) {
      throw duplicateError({ turnId: call.turnId, seq: call.decidedSeq, kind: 'approval/asked', callId: call.callId }, this.#location)
    }
    this.#rounds.add(round)
    this.#parked.set(call.token, storedRound(call))
  }

  async parked(query: ParkedQuery = {}): Promise<ParkedCall[]> {
    this.#check()
    return [...this.#parked.values()].filter((call) => matchesParked(call, query)).sort((a, b) => a.askedAt - b.askedAt)
  }

  async decide(token: string, decision: ParkedDecision, askedAfter = Number.NEGATIVE_INFINITY): Promise<Claimed | undefined> {
    return this.#update(token, (call) =>
      call.decision === undefined && call.settled === undefined && call.askedAt >= askedAfter ? { ...call, decision } : undefined,
    )
  }

  async expire(token: string, expiry: { readonly host: string; readonly at: number }, askedBefore: number): Promise<Claimed | undefined> {
    const settled: ParkedSettlement = { kind: 'expire', host: expiry.host, at: expiry.at }
    return this.#update(token, (call) =>
      call.decision === undefined && call.settled === undefined && call.askedAt < askedBefore ? { ...call, settled } : undefined,
    )
  }

  async settle(token: string, settled: ParkedSettlement): Promise<Claimed | undefined> {
    return this.#update(token, (call) => (call.settled === undefined ? { ...call, settled } : undefined))
  }

  async claimKey(key: string, holder: KeyHolder): Promise<KeyClaim> {
    this.#check()
    let claim = this.#keys.get(key)
    if (claim === undefined) {
      claim = Object.freeze({ key, turnId: holder.turnId, callId: holder.callId, host: holder.host, at: Date.now() })
      this.#keys.set(key, claim)
    }
    return claim
  }

  async readKey(key: string): Promise<KeyClaim | undefined> {
    this.#check()
    return this.#keys.get(key)
  }

  async completeKey(key: string, holder: KeyHolder, result: StoredResult): Promise<void> {
    this.#check()
    const claim = this.#keys.get(key)
    if (claim !== undefined && claim.result === undefined && sameHolder(claim, holder)) {
      this.#keys.set(key, Object.freeze({ ...claim, result: structuredClone(result) }))
    }
  }

  async releaseKey(key: string, holder: KeyHolder): Promise<void> {
    this.#check()
    const claim = this.#keys.get(key)
    if (claim !== undefined && claim.result === undefined && sameHolder(claim, holder)) this.#keys.delete(key)
  }

  async grant(grant: SessionGrant): Promise<void> {
    this.#check()
    const key = grantKey(grant)
    if (!this.#grants.has(key)) {
      const { session, subjectId, source, fingerprint } = grant
      this.#grants.set(key, Object.freeze({ session, subjectId, source, fingerprint, at: Date.now() }))
    }
  }

  async grants(query: GrantQuery = {}): Promise<StoredGrant[]> {
    this.#check()
    return [...this.#grants.values()].filter((grant) => matchesGrant(grant, query))
  }

  async revokeGrants(query: GrantQuery & { readonly session: string }): Promise<number> {
    this.#check()
    let n = 0
    for (const [key, grant] of this.#grants) {
      if (matchesGrant(grant, query) && this.#grants.delete(key)) n += 1
    }
    return n
  }

  async hasGrant(grant: SessionGrant): Promise<boolean> {
    this.#check()
    return this.#grants.has(grantKey(grant))
  }

  /**
   * The same rule as the shared stores': a host another fenced cannot beat again (`HOST_FENCED`). In
   * one process this store's own host is never fenced (repair fences only other hosts).
   */
  async heartbeat(host: string, leaseMs: number): Promise<void> {
    this.#check()
    if (this.#beats.get(host)?.fenced === true) throw fencedError(host, this.#location, 'heartbeat')
    this.#beats.set(host, { host, beatAt: Date.now(), leaseMs })
  }

  /** For crash repair, before it reads what is open: fences every other host past its lease at `now`. */
  fenceExpired(now: number): void {
    for (const beat of this.#beats.values()) {
      if (beat.host !== this.host && beat.fenced !== true && beat.beatAt + beat.leaseMs < now) beat.fenced = true
    }
  }

  async retire(host: string): Promise<void> {
    this.#check()
    this.#beats.delete(host)
  }

  /** For crash repair: every round of the given turns, and every heartbeat. */
  roundsOf(turnIds: ReadonlySet<string>): ParkedCall[] {
    return [...this.#parked.values()].filter((call) => turnIds.has(call.turnId))
  }

  beats(): HostBeat[] {
    return [...this.#beats.values()].map(({ host, beatAt, leaseMs, fenced }) => ({ host, beatAt, leaseMs, fenced: fenced === true }))
  }

  async #update(token: string, change: (call: ParkedCall) => ParkedCall | undefined): Promise<Claimed | undefined> {
    this.#check()
    const call = this.#parked.get(token)
    if (call === undefined) return undefined
    const changed = change(call)
    if (changed === undefined) return { won: false, call }
    const frozen = Object.freeze(changed)
    this.#parked.set(token, frozen)
    return { won: true, call: frozen }
  }

  async createTask(task: StoredTask): Promise<void> {
    this.#check()
    if (this.#tasks.has(task.taskId)) throw taskDuplicateError(task.taskId, this.#location)
    this.#tasks.set(task.taskId, structuredClone(task))
  }

  async readTask(taskId: string): Promise<StoredTask | undefined> {
    this.#check()
    const task = this.#tasks.get(taskId)
    return task === undefined ? undefined : structuredClone(task)
  }

  async updateTask(taskId: string, change: TaskChange, expect?: TaskStatus | TaskExpect): Promise<boolean> {
    this.#check()
    const task = this.#tasks.get(taskId)
    const { status, updatedAt } = taskExpect(expect)
    if (task === undefined || isSettledTask(task.status) || (status !== undefined && task.status !== status)) return false
    if (updatedAt !== undefined && task.updatedAt !== updatedAt) return false
    this.#tasks.set(taskId, { ...task, status: change.status, state: structuredClone(change.state), updatedAt: change.at })
    return true
  }
}

const grantKey = (grant: SessionGrant) => JSON.stringify([grant.session, grant.subjectId, grant.source, grant.fingerprint])

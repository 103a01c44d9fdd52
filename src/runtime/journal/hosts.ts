import { randomInt } from 'node:crypto'
import { hostname } from 'node:os'
import { SeamError } from '../../errors.js'
import type { HostBeat } from '../../seams/coordination.js'
import type { RepairHosts } from '../../seams/journal.js'

/**
 * When this process started, in epoch milliseconds. Taken once, at load, so a later clock step does
 * not move it; `process.uptime()` is the process's, also inside a worker thread.
 */
const PROCESS_STARTED_AT = Date.now() - process.uptime() * 1000

/** The largest pid `process.kill` accepts; anything larger is not a pid. */
const MAX_PID = 0x7fff_ffff

/** The host id stores stamp on the events they write unless given one: `hostname:pid` of this process. */
export function defaultHostId(): string {
  return `${hostname()}:${process.pid}`
}

/** Who wrote the `turn/begin` of an open turn, or the `tool/call` of an open call. */
export interface Owner {
  /** The writer's host id; `null` or missing on events written before stores stamped one. */
  readonly host?: string | null
  /** When the writer wrote that event, epoch milliseconds. */
  readonly at: number
}

/**
 * The repair rule, as a test of one owner: whether its writer is gone, so repair may close what it
 * left open. `self` is the repairing store's host id. Gone are:
 * - an owner without a host (rows of journals written before stores stamped one);
 * - `self`, only for events written before this process started: an earlier process with the same
 *   id (a restarted container is pid 1 again; a fixed `hostId`). Later ones are this process's own;
 * - `hostname:pid` of this machine whose process no longer exists (`kill(pid, 0)` fails with ESRCH;
 *   EPERM means it exists);
 * - a host with a heartbeat in the journal whose last beat is older than its lease at `now`, or
 *   whose lease another host fenced (any machine: the lease is how hosts tell each other they are
 *   alive, so a hung process counts too);
 * - any other host (another machine, or an id this machine cannot check) only with `hosts: 'all'`.
 * Each pid is looked up once per test.
 */
export function ownerGoneTest(
  self: string | undefined,
  hosts: RepairHosts = 'dead-local',
  beats: readonly HostBeat[] = [],
  now = Date.now(),
): (owner: Owner) => boolean {
  const local = hostname()
  const alive = new Map<number, boolean>()
  // A fenced lease has ended, whenever its last beat was.
  const leases = new Map(beats.map((beat) => [beat.host, beat.fenced === true ? Number.NEGATIVE_INFINITY : beat.beatAt + beat.leaseMs]))
  return ({ host, at }) => {
    if (host === undefined || host === null) return true
    if (host === self) return at < PROCESS_STARTED_AT
    const pid = localPid(host, local)
    if (pid !== undefined) {
      let known = alive.get(pid)
      if (known === undefined) {
        known = isProcessAlive(pid)
        alive.set(pid, known)
      }
      if (!known) return true
    }
    const leaseEnds = leases.get(host)
    if (leaseEnds !== undefined) return leaseEnds < now
    return pid === undefined && hosts === 'all'
  }
}

/** Whether a process with this pid exists on this machine (it may belong to another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/** The pid of a `hostname:pid` host id of this machine, or `undefined` for any other id. */
function localPid(host: string, local: string): number | undefined {
  const colon = host.lastIndexOf(':')
  if (colon <= 0 || host.slice(0, colon) !== local) return undefined
  const digits = host.slice(colon + 1)
  // Never 0 or negative: `kill` would signal a process group.
  if (!/^[1-9][0-9]{0,9}$/.test(digits)) return undefined
  const pid = Number(digits)
  return pid <= MAX_PID ? pid : undefined
}

/**
 * A new lease epoch: the token a store registers its host's lease under on its first heartbeat.
 * Random, so a second process given the same host id (a restart, a copied config) holds a lease of
 * its own and fences the earlier one's writes rather than sharing them.
 */
export function newEpoch(): number {
  return randomInt(1, 2 ** 48)
}

/** The fault every write of a fenced store fails with; `what` names the write. */
export function fencedError(host: string, location: string, what = 'write'): SeamError {
  return new SeamError('HOST_FENCED', `The journal at ${location} refused this ${what}: host "${host}" lost its lease (another host fenced it and repaired its open calls).`, {
    details: { host, location },
    hint: 'This host must stop using the journal: close the root and start a new one (it registers a new lease).',
  })
}

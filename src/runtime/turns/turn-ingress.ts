import { randomUUID } from 'node:crypto'
import { SeamError } from '../../errors.js'
import type { OriginScope, } from '../../seams/types.js'
import type { JournalStore } from '../../seams/journal.js'
import type { TurnEnvelope, TurnOrigin, TurnPolicy, TurnPorts } from '../../seams/types.js'

export interface TurnIngressInput {
  turnId?: string
  session: string
  principal: { subjectId: string; roles?: readonly string[] }
  origin?: TurnOrigin
  owner?: string
  unattended?: boolean
  policy?: TurnPolicy
  signal: AbortSignal
  ports?: TurnPorts
  journal: JournalStore
}

// Shared by every turn that has none: a turn begins often, and these are frozen.
const NO_ROLES: readonly string[] = Object.freeze([])
const NO_POLICY: TurnPolicy = Object.freeze({})

const SCOPES: readonly OriginScope[] = ['private', 'group', 'channel']

function blank(value: unknown): boolean {
  return typeof value !== 'string' || value.trim() === ''
}

function invalid(message: string): never {
  throw new SeamError('INVALID_TURN', `invalid turn: ${message}`)
}

/** Validates and freezes a turn envelope; every violation is a `SeamError` `INVALID_TURN`. */
export function createTurnIngress(input: TurnIngressInput): TurnEnvelope {
  if (input === null || typeof input !== 'object') invalid('expected an object')
  const turnId = input.turnId ?? randomUUID()
  if (blank(turnId)) invalid('`turnId` must be a non-blank string')
  if (blank(input.session)) invalid('`session` must be a non-blank string')
  if (input.principal === null || typeof input.principal !== 'object' || blank(input.principal.subjectId)) {
    invalid('`principal.subjectId` must be a non-blank string')
  }
  const roles = input.principal.roles ?? []
  if (!Array.isArray(roles) || roles.some((r) => blank(r))) invalid('`principal.roles` must be non-blank strings')
  if (!(input.signal instanceof AbortSignal)) invalid('`signal` must be an AbortSignal')
  const journal = input.journal
  if (journal === null || typeof journal !== 'object' || typeof journal.append !== 'function') {
    invalid('`journal` must be a JournalStore')
  }
  const owner = input.owner ?? 'root'
  if (blank(owner)) invalid('`owner` must be a non-blank string')
  // An owner path is `root` or `root/child/…`: an empty or padded part (`root/`, `root//x`) would
  // match no plugin exactly, yet see what its prefix owns.
  if (!/^root(?:\/[^/\s]+)*$/.test(owner)) invalid('`owner` must be `root` or a path below it like `root/child`')
  const origin = input.origin
  if (origin !== undefined) {
    if (origin === null || typeof origin !== 'object' || blank(origin.kind)) invalid('`origin.kind` must be a non-blank string')
    if (origin.platform !== undefined && blank(origin.platform)) invalid('`origin.platform` must be a non-blank string')
    if (origin.scope !== undefined && !SCOPES.includes(origin.scope)) {
      invalid(`\`origin.scope\` must be one of ${SCOPES.join(', ')}`)
    }
  }
  const unattended = input.unattended ?? false
  if (typeof unattended !== 'boolean') invalid('`unattended` must be a boolean')
  const ports = input.ports ?? {}
  if (unattended && (ports.approval !== undefined || ports.question !== undefined)) {
    invalid('an unattended turn cannot expose interactive ports (approval, question)')
  }
  if (ports.approval !== undefined && typeof ports.approval?.request !== 'function') {
    invalid('`ports.approval` must have a request() method')
  }
  const question = ports.question as Record<string, unknown> | undefined
  if (question !== undefined && !['ask', 'elicit', 'sample', 'roots'].some((method) => typeof question?.[method] === 'function')) {
    invalid('`ports.question` must have an ask(), elicit(), sample() or roots() method')
  }
  const policy = input.policy ?? {}
  for (const [key, value] of Object.entries(policy)) {
    // Timers wait at most 2^31 - 1 ms; `maxParallel` counts calls.
    if (value !== undefined && !(typeof value === 'number' && value > 0 && value <= 0x7fff_ffff && (key !== 'maxParallel' || Number.isInteger(value)))) {
      invalid(`\`policy.${key}\` must be a positive number up to 2147483647${key === 'maxParallel' ? ', whole' : ''}`)
    }
  }
  return Object.freeze({
    turnId,
    session: input.session,
    principal: Object.freeze({ subjectId: input.principal.subjectId, roles: roles.length === 0 ? NO_ROLES : Object.freeze([...roles]) }),
    origin: origin === undefined ? undefined : Object.freeze({ ...origin }),
    owner,
    unattended,
    policy: input.policy === undefined ? NO_POLICY : Object.freeze({ ...policy }),
    signal: input.signal,
    ports: Object.freeze({ ...ports }),
    journal,
  })
}

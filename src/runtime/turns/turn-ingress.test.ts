import { describe, expect, it } from 'vitest'
import { SeamError } from '../../errors.js'
import { memoryJournal } from '../journal/memory.js'
import { createTurnIngress, type TurnIngressInput } from './turn-ingress.js'

const journal = memoryJournal()

function input(overrides: Partial<Record<keyof TurnIngressInput, unknown>> = {}): TurnIngressInput {
  return {
    turnId: 'turn-1',
    session: 'chat-1',
    principal: { subjectId: 'u1', roles: ['admin'] },
    signal: new AbortController().signal,
    journal,
    ...overrides,
  } as TurnIngressInput
}

function rejection(overrides: Partial<Record<keyof TurnIngressInput, unknown>>): SeamError {
  try {
    createTurnIngress(input(overrides))
  } catch (error) {
    if (SeamError.is(error)) return error
    throw error
  }
  throw new Error('expected createTurnIngress to throw')
}

const approval = { request: async () => 'rejected' as const }
const question = { ask: async () => 'yes' }

describe('createTurnIngress', () => {
  it('freezes the envelope, its principal, roles, origin, policy and ports', () => {
    const turn = createTurnIngress(
      input({ origin: { kind: 'im', platform: 'discord', scope: 'group' }, policy: { timeoutMs: 100 }, ports: { question } }),
    )
    expect(turn).toMatchObject({ turnId: 'turn-1', session: 'chat-1', owner: 'root', unattended: false, journal })
    for (const part of [turn, turn.principal, turn.principal.roles, turn.origin, turn.policy, turn.ports]) {
      expect(Object.isFrozen(part)).toBe(true)
    }
    expect(() => {
      ;(turn as { session: string }).session = 'other'
    }).toThrow(TypeError)
  })

  it('copies caller objects so later mutation cannot change the envelope', () => {
    const roles = ['reader']
    const origin = { kind: 'im', platform: 'slack' }
    const turn = createTurnIngress(input({ principal: { subjectId: 'u1', roles }, origin }))
    roles.push('admin')
    origin.platform = 'discord'
    expect(turn.principal.roles).toEqual(['reader'])
    expect(turn.origin?.platform).toBe('slack')
  })

  it('generates a turn id when none is given and defaults roles to none', () => {
    const a = createTurnIngress(input({ turnId: undefined, principal: { subjectId: 'u1' } }))
    const b = createTurnIngress(input({ turnId: undefined }))
    expect(a.turnId).toMatch(/^[0-9a-f-]{36}$/)
    expect(a.turnId).not.toBe(b.turnId)
    expect(a.principal.roles).toEqual([])
  })

  it.each([
    ['an empty turnId', { turnId: '' }, '`turnId` must be a non-blank string'],
    ['a blank turnId', { turnId: '   ' }, '`turnId` must be a non-blank string'],
    ['a blank session', { session: ' ' }, '`session` must be a non-blank string'],
    ['a missing session', { session: undefined }, '`session` must be a non-blank string'],
    ['a missing principal', { principal: undefined }, '`principal.subjectId` must be a non-blank string'],
    ['a principal without a subject', { principal: { roles: [] } }, '`principal.subjectId` must be a non-blank string'],
    ['a blank principal subject', { principal: { subjectId: '' } }, '`principal.subjectId` must be a non-blank string'],
    ['a blank role', { principal: { subjectId: 'u1', roles: [''] } }, '`principal.roles` must be non-blank strings'],
    ['a missing signal', { signal: undefined }, '`signal` must be an AbortSignal'],
    ['a signal-like object', { signal: { aborted: false } }, '`signal` must be an AbortSignal'],
    ['a missing journal', { journal: undefined }, '`journal` must be a JournalStore'],
    ['a journal without append', { journal: { read: async () => [] } }, '`journal` must be a JournalStore'],
    ['a blank owner', { owner: '' }, '`owner` must be a non-blank string'],
    ['an origin without a kind', { origin: { platform: 'discord' } }, '`origin.kind` must be a non-blank string'],
    ['a blank origin platform', { origin: { kind: 'im', platform: '' } }, '`origin.platform` must be a non-blank string'],
    ['an unknown origin scope', { origin: { kind: 'im', scope: 'public' } }, '`origin.scope` must be one of private, group, channel'],
    ['a non-boolean unattended', { unattended: 'yes' }, '`unattended` must be a boolean'],
    ['an unattended turn with an approval port', { unattended: true, ports: { approval } }, 'an unattended turn cannot expose interactive ports (approval, question)'],
    ['an unattended turn with a question port', { unattended: true, ports: { question } }, 'an unattended turn cannot expose interactive ports (approval, question)'],
    ['an approval port without request()', { ports: { approval: {} } }, '`ports.approval` must have a request() method'],
    ['a question port without ask(), elicit(), sample() or roots()', { ports: { question: {} } }, '`ports.question` must have an ask(), elicit(), sample() or roots() method'],
    ['a non-positive policy timeout', { policy: { timeoutMs: 0 } }, '`policy.timeoutMs` must be a positive number up to 2147483647'],
    ['a non-finite policy value', { policy: { maxParallel: Number.POSITIVE_INFINITY } }, '`policy.maxParallel` must be a positive number up to 2147483647, whole'],
    ['an owner with an empty part', { owner: 'root/' }, '`owner` must be `root` or a path below it like `root/child`'],
    ['an owner outside the plugin tree', { owner: 'admin' }, '`owner` must be `root` or a path below it like `root/child`'],
    ['a timeout no timer can wait', { policy: { approvalTimeoutMs: 2 ** 31 } }, '`policy.approvalTimeoutMs` must be a positive number up to 2147483647'],
    ['a fractional maxParallel', { policy: { maxParallel: 1.5 } }, '`policy.maxParallel` must be a positive number up to 2147483647, whole'],
  ])('rejects %s with INVALID_TURN and a clear message', (_label, overrides, message) => {
    const error = rejection(overrides)
    expect(error.code).toBe('INVALID_TURN')
    expect(error.message).toBe(`invalid turn: ${message}`)
  })

  it('rejects a non-object input with INVALID_TURN', () => {
    expect(() => createTurnIngress(null as unknown as TurnIngressInput)).toThrowError(
      expect.objectContaining({ code: 'INVALID_TURN', message: 'invalid turn: expected an object' }),
    )
  })

  it('accepts an unattended turn without interactive ports', () => {
    const turn = createTurnIngress(input({ unattended: true, ports: {} }))
    expect(turn.unattended).toBe(true)
    expect(turn.ports).toEqual({})
  })

  it('accepts each origin scope', () => {
    for (const scope of ['private', 'group', 'channel'] as const) {
      expect(createTurnIngress(input({ origin: { kind: 'im', scope } })).origin?.scope).toBe(scope)
    }
  })
})

import type { DispatchResult, JournalEvent, PostDecision, PreDecision } from '../../src/index.js'
import type { Random } from './random.js'

/**
 * How one piece of host code misbehaves in a scenario. `late-reject` rejects after a while (after
 * the runtime may have stopped waiting), `nonsense` answers something no contract allows.
 */
export type Behaviour = 'ok' | 'slow' | 'throw' | 'reject' | 'late-reject' | 'hang' | 'nonsense' | 'signal'

export const BEHAVIOURS: readonly Behaviour[] = ['ok', 'ok', 'ok', 'slow', 'throw', 'reject', 'late-reject', 'hang', 'nonsense', 'signal']

const never = <T>() => new Promise<T>(() => {})
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Acts out `behaviour` around `answer`: the value a well-behaved piece of host code would give.
 * `signal` behaviours wait until the call's signal aborts, then reject (as code honouring it does).
 */
export function act<T>(behaviour: Behaviour, answer: () => T | Promise<T>, nonsense: unknown, ms: number, signal?: AbortSignal): T | Promise<T> {
  switch (behaviour) {
    case 'ok':
      return answer()
    case 'slow':
      return delay(ms).then(answer)
    case 'throw':
      throw new Error('injected throw')
    case 'reject':
      return Promise.reject(new Error('injected rejection'))
    case 'late-reject':
      return delay(ms).then(() => Promise.reject(new Error('injected late rejection')))
    case 'hang':
      return never()
    case 'nonsense':
      return nonsense as T
    case 'signal':
      return new Promise<T>((resolve, reject) => {
        if (signal?.aborted) return reject(new Error('aborted before it began'))
        let stopped = false
        signal?.addEventListener('abort', () => {
          stopped = true
          reject(new Error('stopped by the signal'))
        }, { once: true })
        // Once stopped it answers nothing: a `next()` it would call late is its own to observe.
        void delay(ms).then(() => {
          if (!stopped) resolve(answer())
        })
      })
  }
}

export interface Faults {
  readonly body: Behaviour
  readonly risk: Behaviour | undefined
  readonly pre: Behaviour | undefined
  readonly guard: Behaviour | undefined
  readonly wrapper: Behaviour | undefined
  /** A wrapper that returns the body's result, then hangs or rejects (`after`) instead. */
  readonly wrapperAfterNext: boolean
  readonly post: Behaviour | undefined
  readonly observerThrows: boolean
  readonly approval: Behaviour | undefined
  readonly permission: Behaviour | undefined
  readonly journal: { kind: JournalEvent['kind']; behaviour: 'fail' | 'stall' | 'slow' } | undefined
  readonly ms: number
}

export function drawFaults(random: Random): Faults {
  const maybe = (p: number) => (random.chance(p) ? random.pick(BEHAVIOURS) : undefined)
  return {
    body: random.pick(BEHAVIOURS),
    risk: maybe(0.3),
    pre: maybe(0.4),
    guard: maybe(0.4),
    wrapper: maybe(0.3),
    wrapperAfterNext: random.chance(0.2),
    post: maybe(0.3),
    observerThrows: random.chance(0.2),
    approval: maybe(0.5),
    permission: maybe(0.3),
    journal: random.chance(0.25)
      ? { kind: random.pick(['tool/call', 'tool/result', 'approval/asked', 'approval/decided'] as const), behaviour: random.pick(['fail', 'stall', 'slow'] as const) }
      : undefined,
    ms: random.int(0, 12),
  }
}

export const nonsense = {
  pre: { kind: 'maybe' } as unknown as PreDecision,
  post: { kind: 'accept', content: 'not blocks', value: 1 } as unknown as PostDecision,
  wrapper: { ok: 'yes' } as unknown as DispatchResult,
  guard: 42,
  approval: 'sure',
  permission: 'yes',
  risk: { not: 'a string' },
}

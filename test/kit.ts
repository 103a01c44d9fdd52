import { expect, onTestFinished } from 'vitest'
import { createRoot, definePlugin, type JournalEvent, memoryJournal, type PluginContext, type Root, type RootOptions } from 'seam-runtime'
import type { BeginTurnInput } from '../src/runtime/root.js'
import type { MemoryJournal } from '../src/runtime/journal/memory.js'

/** A root over one plugin whose setup is `setup`; closed when the test finishes. */
export async function rootWith(
  setup: (ctx: PluginContext) => void | Promise<void>,
  options: Partial<RootOptions> = {},
): Promise<{ root: Root; journal: MemoryJournal }> {
  const journal = (options.journal as MemoryJournal | undefined) ?? memoryJournal()
  const root = await createRoot({ plugin: definePlugin({ name: 'root', setup }), ...options, journal })
  onTestFinished(() => root.close())
  return { root, journal }
}

export function beginTurn(root: Root, input: Partial<BeginTurnInput> = {}) {
  return root.beginTurn({ session: 'session-1', principal: { subjectId: 'user-1', roles: [] }, ...input })
}

/** Every `tool/call` of the turn has exactly one `tool/result`, and no result is unpaired. */
export async function expectPaired(journal: MemoryJournal, turnId: string): Promise<void> {
  const events = await journal.read(turnId)
  const calls = events.filter((e) => e.kind === 'tool/call').map((e) => (e as { callId: string }).callId)
  const results = events.filter((e) => e.kind === 'tool/result').map((e) => (e as { callId: string }).callId)
  expect([...results].sort()).toEqual([...calls].sort())
  expect(new Set(results).size).toBe(results.length)
}

/** The kinds of a turn's journal events, with call ids: `tool/call:c1`. */
export async function journalKinds(journal: MemoryJournal, turnId: string): Promise<string[]> {
  return (await journal.read(turnId)).map((e) => ('callId' in e ? `${e.kind}:${e.callId}` : e.kind))
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A promise with its resolver, for bodies a test releases by hand. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** `journal` with `before(event)` run ahead of each append (it may throw, abort or delay it). */
export function tappedJournal<J extends object & { append(event: JournalEvent): Promise<void> }>(
  journal: J,
  before: (event: JournalEvent) => void | Promise<void>,
): J {
  return new Proxy(journal, {
    get(target, key) {
      if (key === 'append') {
        return async (event: JournalEvent) => {
          await before(event)
          return target.append(event)
        }
      }
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

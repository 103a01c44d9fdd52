import { expect, it } from 'vitest'
import { SeamError } from '../../errors.js'
import type { JournalEvent, JournalStore, OutcomeStatus, TurnSummary } from '../../seams/journal.js'

interface TurnSpec {
  readonly session?: string
  readonly calls?: readonly { name: string; status?: OutcomeStatus; code?: string }[]
  readonly end?: 'ended' | 'interrupted'
}

/** Appends one turn as the runtime would: begin, each call with its result, then the end if any. */
async function writeTurn(store: JournalStore, turnId: string, spec: TurnSpec = {}, at = 1_750_000_000_000): Promise<void> {
  let seq = 0
  const events: JournalEvent[] = [
    { kind: 'turn/begin', turnId, seq: ++seq, at, session: spec.session ?? 's1', subjectId: 'u1', generation: 2, owner: 'root' },
  ]
  for (const [index, call] of (spec.calls ?? []).entries()) {
    const callId = `c${index}`
    events.push({ kind: 'tool/call', turnId, seq: ++seq, at, callId, name: call.name, arguments: '{}', generation: 2 })
    const status = call.status ?? 'completed'
    events.push({ kind: 'tool/result', turnId, seq: ++seq, at: at + 5, callId, status, ...(call.code ? { code: call.code as never } : {}), content: [], durationMs: 5 })
  }
  if (spec.end !== undefined) events.push({ kind: 'turn/end', turnId, seq: ++seq, at: at + 9, reason: spec.end })
  for (const event of events) await store.append(event)
}

const ids = (turns: readonly TurnSummary[]) => turns.map((turn) => turn.turnId)

/** `JournalStore.turns`, run inside the journal contract of every store; `open` gives a fresh store writing as `host-a`. */
export function describeTurnQueries(open: () => Promise<JournalStore>): void {
  it('lists turns newest first with their summary, and pages through them with the cursor', async () => {
    const store = await open()
    for (let index = 1; index <= 5; index += 1) {
      await writeTurn(store, `t${index}`, { calls: [{ name: 'lookup' }, { name: 'lookup' }], end: 'ended' }, 1_000 * index)
    }
    const first = await store.turns({ limit: 2 })
    expect(ids(first.turns)).toEqual(['t5', 't4'])
    expect(first.turns[0]).toMatchObject({
      turnId: 't5',
      session: 's1',
      subjectId: 'u1',
      owner: 'root',
      generation: 2,
      begunAt: 5_000,
      endedAt: 5_009,
      endReason: 'ended',
      calls: 2,
    })
    const second = await store.turns({ limit: 2, before: first.next })
    expect(ids(second.turns)).toEqual(['t3', 't2'])
    const last = await store.turns({ limit: 2, before: second.next })
    expect(ids(last.turns)).toEqual(['t1'])
    expect(last.next).toBeUndefined()
    expect(ids((await store.turns()).turns)).toEqual(['t5', 't4', 't3', 't2', 't1'])
  })

  it('names the tools a turn called, first asked first, and counts its results by status', async () => {
    const store = await open()
    const calls = [{ name: 'search' }, { name: 'lookup', status: 'failed' as const }, { name: 'search', status: 'denied' as const }, { name: 'search' }]
    await writeTurn(store, 'mixed', { calls, end: 'ended' })
    // A call with no result yet (running, or parked) counts as a call and as no outcome.
    await store.append({ kind: 'turn/begin', turnId: 'open', seq: 1, at: 1, session: 's1', subjectId: 'u1', generation: 2, owner: 'root' })
    await store.append({ kind: 'tool/call', turnId: 'open', seq: 2, at: 1, callId: 'c0', name: 'wipe', arguments: '{}', generation: 2 })
    const many = Array.from({ length: 12 }, (_, index) => ({ name: `tool_${String(index).padStart(2, '0')}` }))
    await writeTurn(store, 'many', { calls: many })
    const { turns } = await store.turns()
    const byId = new Map(turns.map((turn) => [turn.turnId, turn]))
    expect(byId.get('mixed')).toMatchObject({ calls: 4, tools: ['search', 'lookup'], outcomes: { completed: 2, failed: 1, denied: 1 } })
    expect(byId.get('open')).toMatchObject({ calls: 1, tools: ['wipe'], outcomes: {} })
    expect(byId.get('many')!.tools).toEqual(many.slice(0, 8).map((call) => call.name))
    expect(byId.get('many')!.calls).toBe(12)
  })

  it('shows a turn still running without an end, and an interrupted one as interrupted', async () => {
    const store = await open()
    await writeTurn(store, 'broken', { calls: [{ name: 'lookup', status: 'failed', code: 'OUTCOME_UNKNOWN' }], end: 'interrupted' })
    await writeTurn(store, 'running', { calls: [] })
    const { turns } = await store.turns()
    expect(turns[0]).toMatchObject({ turnId: 'running', calls: 0 })
    expect(turns[0]!.endReason).toBeUndefined()
    expect(turns[0]!.endedAt).toBeUndefined()
    expect(turns[1]).toMatchObject({ turnId: 'broken', endReason: 'interrupted', calls: 1 })
  })

  it('filters by session, tool, status and code, and by several at once', async () => {
    const store = await open()
    await writeTurn(store, 'a', { session: 'chat-1', calls: [{ name: 'search' }] })
    await writeTurn(store, 'b', { session: 'chat-2', calls: [{ name: 'search', status: 'denied', code: 'DENIED' }, { name: 'read' }] })
    await writeTurn(store, 'c', { session: 'chat-1', calls: [{ name: 'read', status: 'failed', code: 'OUTCOME_UNKNOWN' }] })
    await writeTurn(store, 'd', { session: 'chat-1' })
    expect(ids((await store.turns({ session: 'chat-1' })).turns)).toEqual(['d', 'c', 'a'])
    expect(ids((await store.turns({ tool: 'search' })).turns)).toEqual(['b', 'a'])
    expect(ids((await store.turns({ status: 'failed' })).turns)).toEqual(['c'])
    expect(ids((await store.turns({ code: 'DENIED' })).turns)).toEqual(['b'])
    expect(ids((await store.turns({ session: 'chat-1', tool: 'read' })).turns)).toEqual(['c'])
    expect(ids((await store.turns({ tool: 'read', status: 'completed' })).turns)).toEqual(['b'])
    expect(ids((await store.turns({ session: 'chat-2', code: 'OUTCOME_UNKNOWN' })).turns)).toEqual([])
    expect(ids((await store.turns({ session: 'nobody' })).turns)).toEqual([])
  })

  it('pages a filtered list without skipping or repeating a turn', async () => {
    const store = await open()
    for (let index = 0; index < 7; index += 1) {
      await writeTurn(store, `t${index}`, { session: index % 2 === 0 ? 'even' : 'odd', calls: [{ name: index % 2 === 0 ? 'even_tool' : 'odd_tool' }] })
    }
    const seen: string[] = []
    let before: string | undefined
    do {
      const page = await store.turns({ tool: 'even_tool', limit: 3, ...(before ? { before } : {}) })
      seen.push(...ids(page.turns))
      before = page.next
    } while (before !== undefined)
    expect(seen).toEqual(['t6', 't4', 't2', 't0'])
  })

  it('filters by the host that began the turn', async () => {
    const store = await open()
    await writeTurn(store, 'mine')
    expect((await store.turns()).turns[0]?.host).toBe('host-a')
    expect(ids((await store.turns({ host: 'host-a' })).turns)).toEqual(['mine'])
    expect(ids((await store.turns({ host: 'elsewhere:1' })).turns)).toEqual([])
  })

  it('refuses a limit out of range, an empty filter and a cursor it did not hand out with INVALID_OPTIONS', async () => {
    const store = await open()
    for (const query of [{ limit: 0 }, { limit: 501 }, { limit: 2.5 }, { session: '' }, { before: 'not-a-cursor' }]) {
      const error = await store.turns(query).then(
        () => undefined,
        (reason: unknown) => reason,
      )
      expect(SeamError.is(error) && error.code, JSON.stringify(query)).toBe('INVALID_OPTIONS')
    }
  })
}

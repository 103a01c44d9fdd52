import { describe, expect, it } from 'vitest'
import { begin, call, describeJournalContract, end, now, result } from './contract.test-suite.js'
import { memoryJournal } from './memory.js'
import { registerSecret } from '../base/redact.js'
import type { JournalEvent, JournalStore } from '../../seams/journal.js'

describeJournalContract('memory', {
  shared: false,
  async storage() {
    const stores: JournalStore[] = []
    return {
      open(options) {
        const store = memoryJournal(options)
        stores.push(store)
        return store
      },
      async dispose() {
        await Promise.all(stores.map((store) => store.close()))
      },
    }
  },
})

describe('memoryJournal', () => {
  it('rejects appends while unavailable, keeps what it had, and accepts appends again once available', async () => {
    const journal = memoryJournal()
    await journal.append(begin('t1', 1))
    journal.setAvailable(false)
    await expect(journal.append(call('t1', 2, 'c1'))).rejects.toThrow(/unavailable/)
    expect(await journal.read('t1')).toHaveLength(1)
    journal.setAvailable(true)
    await journal.append(call('t1', 2, 'c1'))
    expect(await journal.read('t1')).toHaveLength(2)
  })

  it('rejects exactly the appends failWith answers with an error', async () => {
    const down = new Error('disk full')
    const journal = memoryJournal({ failWith: (event) => (event.kind === 'tool/result' ? down : undefined) })
    await journal.append(call('t1', 1, 'c1'))
    await expect(journal.append(result('t1', 2, 'c1'))).rejects.toBe(down)
    expect((await journal.read('t1')).map((event) => event.kind)).toEqual(['tool/call'])
  })

  it('keeps what was journaled: the appended event is frozen, so the caller cannot change it afterwards', async () => {
    const journal = memoryJournal()
    const event = result('t1', 1, 'c1', 'original') as { content: { type: 'text'; text: string }[] }
    await journal.append(event as Parameters<typeof journal.append>[0])
    expect(() => {
      event.content[0]!.text = 'changed'
    }).toThrow(TypeError)
    const [stored] = await journal.read('t1')
    expect(stored).toMatchObject({ content: [{ text: 'original' }] })
    expect(Object.isFrozen(stored)).toBe(true)
  })

  it('still answers reads once closed, so a test can look at what a closed root journaled', async () => {
    const journal = memoryJournal()
    await journal.append(begin('t1', 1))
    await journal.close()
    expect(await journal.read('t1')).toHaveLength(1)
    expect(await journal.tail(5)).toHaveLength(1)
  })

  it('leaves open turns and calls written without a host (this process\'s own), and repairs them with hosts: all', async () => {
    const journal = memoryJournal()
    await journal.append(now(begin('t1', 1)))
    await journal.append(now(call('t1', 2, 'c1')))
    expect(await journal.repair()).toEqual({ results: 0, turns: 0 })
    expect(await journal.repair({ hosts: 'all' })).toEqual({ results: 1, turns: 1 })
    expect((await journal.read('t1')).map((event) => event.host)).toEqual([undefined, undefined, undefined, undefined])
  })

  it('keeps every content block of a stored result frozen, even when the array came frozen', async () => {
    const journal = memoryJournal()
    const block = { type: 'text' as const, text: 'as journaled' }
    await journal.append({ kind: 'tool/result', turnId: 't1', seq: 1, at: Date.now(), callId: 'c1', status: 'completed', content: Object.freeze([block]) as never, durationMs: 1 })
    // ESM is strict: writing to a frozen object throws.
    expect(() => {
      block.text = 'rewritten'
    }).toThrow(TypeError)
    const [stored] = await journal.read('t1')
    expect(stored).toMatchObject({ content: [{ text: 'as journaled' }] })
  })

  it('refuses a payload limit too small to hold its own truncation marker', () => {
    expect(() => memoryJournal({ maxPayloadBytes: 40 })).toThrow('maxPayloadBytes must be an integer of at least 256')
    expect(() => memoryJournal({ maxPayloadBytes: 1.5e3 + 0.5 })).toThrow('maxPayloadBytes')
  })

  it('stamps its hostId, when it has one, and leaves what it wrote itself since this process started', async () => {
    const journal = memoryJournal({ hostId: 'web-1' })
    await journal.append({ ...now(begin('t1', 1)), host: 'elsewhere' })
    await journal.append(now(call('t1', 2, 'c1')))
    await journal.append(call('t2', 1, 'c1'))
    expect(await journal.repair()).toEqual({ results: 1, turns: 0 })
    expect((await journal.read('t1')).map((event) => event.host)).toEqual(['web-1', 'web-1'])
    expect((await journal.read('t2')).map((event) => [event.kind, event.host])).toEqual([
      ['tool/call', 'web-1'],
      ['tool/result', 'web-1'],
    ])
  })
})

describe('memoryJournal redaction', () => {
  const approval = (turnId: string, seq: number, callId: string, summary: string): JournalEvent => ({ kind: 'approval/asked', turnId, seq, at: 1, callId, name: 'n', summary, reason: 'r' })

  it('redacts by shape when events are read, once: later reads return the same frozen events', async () => {
    const journal = memoryJournal()
    await journal.append(begin('t1', 1))
    await journal.append(call('t1', 2, 'c1', '{"password":"hunter2-shape","q":1}'))
    await journal.append(approval('t1', 3, 'c1', 'n token=tok-shape-77'))
    await journal.append(result('t1', 4, 'c1', 'connect postgres://app:pw-shape-1@db/x'))
    const first = await journal.read('t1')
    expect(JSON.stringify(first)).not.toMatch(/hunter2-shape|tok-shape-77|pw-shape-1/)
    expect(first[1]).toMatchObject({ arguments: '{"password":"[redacted]","q":1}' })
    expect(first[3]).toMatchObject({ content: [{ text: 'connect postgres://app:[redacted]@db/x' }] })
    expect(first.every((event) => Object.isFrozen(event))).toBe(true)
    const again = await journal.read('t1')
    expect(again.every((event, index) => event === first[index])).toBe(true)
    expect(await journal.tail(2)).toEqual([first[2], first[3]])
  })

  it('scrubs a registered secret when it is appended, so it stays hidden once unregistered before the read', async () => {
    const journal = memoryJournal()
    const dispose = registerSecret('vault-value-4c3b2a')
    await journal.append(call('t1', 1, 'c1', '{"q":"vault-value-4c3b2a"}'))
    await journal.append(approval('t1', 2, 'c1', 'about vault-value-4c3b2a'))
    await journal.append({ ...result('t1', 3, 'c1'), content: [{ type: 'resource', resource: { uri: 'mem://x', text: 'is vault-value-4c3b2a' } }] } as JournalEvent)
    dispose()
    const events = await journal.read('t1')
    expect(JSON.stringify(events)).not.toContain('vault-value-4c3b2a')
    expect(events[0]).toMatchObject({ arguments: '{"q":"[redacted]"}' })
  })

  it('keeps payloads within maxPayloadBytes whole and cuts longer ones at append, with or without a known secret', async () => {
    const journal = memoryJournal({ maxPayloadBytes: 300 })
    // A payload of 99 UTF-16 units fits in 300 bytes whatever it holds (3 bytes a unit at most); a longer one may not.
    const whole = `"${'a'.repeat(97)}"`
    const long = `"${'b'.repeat(5_000)}"`
    await journal.append(call('t1', 1, 'c1', whole))
    await journal.append(call('t1', 2, 'c2', long))
    await journal.append(result('t1', 3, 'c1', 'c'.repeat(99)))
    await journal.append(result('t1', 4, 'c2', 'd'.repeat(5_000)))
    const dispose = registerSecret('secret-value-77aa')
    await journal.append(call('t1', 5, 'c3', `"secret-value-77aa ${'e'.repeat(5_000)}"`))
    dispose()
    const events = await journal.read('t1')
    const payloads = events.map((event) => (event.kind === 'tool/call' ? event.arguments : event.kind === 'tool/result' ? (event.content[0] as { text: string }).text : ''))
    expect(payloads[0]).toBe(whole)
    expect(payloads[2]).toBe('c'.repeat(99))
    for (const cut of [payloads[1]!, payloads[3]!, payloads[4]!]) {
      expect(cut).toMatch(/…\[truncated: \d+ bytes, sha256:[0-9a-f]{64}\]$/)
      expect(Buffer.byteLength(cut, 'utf8')).toBeLessThanOrEqual(300)
    }
    expect(payloads[4]).not.toContain('secret-value-77aa')
  })

  it('counts a payload cut at append at its cut size against maxBytes', async () => {
    const journal = memoryJournal({ maxPayloadBytes: 300, maxBytes: 5_000 })
    await journal.append(begin('t1', 1))
    await journal.append(call('t1', 2, 'c1'))
    await journal.append(result('t1', 3, 'c1', 'x'.repeat(50_000)))
    await journal.append(end('t1', 4))
    // Kept whole, the result alone would be ten times the bound, and its ended turn dropped.
    const events = await journal.read('t1')
    expect(events).toHaveLength(4)
    expect(Buffer.byteLength((events[2] as { content: { text: string }[] }).content[0]!.text)).toBeLessThanOrEqual(300)
  })

  it('redacts an event placed before later seqs of its turn after those were read', async () => {
    const journal = memoryJournal()
    await journal.append(begin('t1', 1))
    await journal.append(call('t1', 3, 'c2'))
    await journal.read('t1')
    await journal.append(call('t1', 2, 'c1', '{"api_key":"late-key-5512"}'))
    expect((await journal.read('t1')).map((event) => (event.kind === 'tool/call' ? event.arguments : event.kind))).toEqual(['turn/begin', '{"api_key":"[redacted]"}', '{}'])
    expect(JSON.stringify(await journal.tail(10))).not.toContain('late-key-5512')
  })
})

describe('memoryJournal bounds', () => {
  /** One whole turn: begin, one call and its result, end. */
  async function turn(journal: ReturnType<typeof memoryJournal>, turnId: string, text = 'ok'): Promise<void> {
    await journal.append(begin(turnId, 1))
    await journal.append(call(turnId, 2, 'c1'))
    await journal.append(result(turnId, 3, 'c1', text))
    await journal.append(end(turnId, 4))
  }

  it('keeps at most maxTurns turns, dropping the oldest ended ones first', async () => {
    const journal = memoryJournal({ maxTurns: 3 })
    for (const id of ['t1', 't2', 't3', 't4', 't5']) await turn(journal, id)
    expect(await journal.read('t1')).toEqual([])
    expect(await journal.read('t2')).toEqual([])
    expect(await journal.read('t3')).toHaveLength(4)
    expect(await journal.read('t5')).toHaveLength(4)
    expect((await journal.tail(100)).map((event) => event.turnId)).toEqual(['t3', 't3', 't3', 't3', 't4', 't4', 't4', 't4', 't5', 't5', 't5', 't5'])
  })

  it('never drops a live turn, however far past the bound, and keeps refusing its duplicates', async () => {
    const journal = memoryJournal({ maxTurns: 2 })
    await journal.append(begin('live', 1))
    await journal.append(call('live', 2, 'c1'))
    for (const id of ['t1', 't2', 't3', 't4']) await turn(journal, id)
    expect(await journal.read('live')).toHaveLength(2)
    await expect(journal.append(call('live', 3, 'c1'))).rejects.toMatchObject({ code: 'JOURNAL_DUPLICATE' })
    await expect(journal.append(begin('live', 4))).rejects.toMatchObject({ code: 'JOURNAL_DUPLICATE' })
    expect(await journal.read('t3')).toEqual([])
    expect(await journal.read('t4')).toHaveLength(4)
  })

  it('keeps an ended turn while a call of it still waits for its result, and drops it once the result is in', async () => {
    const journal = memoryJournal({ maxTurns: 1 })
    await journal.append(begin('slow', 1))
    await journal.append(call('slow', 2, 'c1'))
    await journal.append(end('slow', 3))
    await turn(journal, 't1')
    expect(await journal.read('slow')).toHaveLength(3)
    await journal.append(result('slow', 4, 'c1'))
    await turn(journal, 't2')
    expect(await journal.read('slow')).toEqual([])
    expect(await journal.read('t2')).toHaveLength(4)
  })

  it('drops ended turns past maxBytes too, counting their payloads', async () => {
    const journal = memoryJournal({ maxBytes: 64 * 1024 })
    const text = 'x'.repeat(20 * 1024)
    for (const id of ['t1', 't2', 't3', 't4']) await turn(journal, id, text)
    expect(await journal.read('t1')).toEqual([])
    expect(await journal.read('t4')).toHaveLength(4)
  })

  it('holds a bounded number of turns by default, so a long run does not grow without end', async () => {
    const journal = memoryJournal()
    for (let n = 0; n < 1_500; n += 1) await turn(journal, `t${n}`)
    expect(await journal.read('t0')).toEqual([])
    expect(await journal.read('t499')).toEqual([])
    expect(await journal.read('t500')).toHaveLength(4)
    expect(await journal.tail(1_000_000)).toHaveLength(4_000)
  })

  it('keeps the uniqueness rules and call counts when calls of a turn interleave', async () => {
    const journal = memoryJournal()
    await journal.append(now(begin('t1', 1)))
    await journal.append(call('t1', 2, 'c1'))
    await journal.append(call('t1', 3, 'c2'))
    // c1 is no longer the turn's latest call, c2 is: each is refused a second result either way.
    await journal.append(result('t1', 4, 'c1'))
    await expect(journal.append(result('t1', 5, 'c1'))).rejects.toThrow(/already holds tool\/result for call c1/)
    await expect(journal.append(call('t1', 5, 'c2'))).rejects.toThrow(/already holds tool\/call for call c2/)
    await journal.append(call('t1', 5, 'c3'))
    await expect(journal.append(call('t1', 6, 'c1'))).rejects.toThrow(/already holds tool\/call for call c1/)
    await expect(journal.append(call('t1', 6, 'c3'))).rejects.toThrow(/already holds tool\/call for call c3/)
    await journal.append(result('t1', 6, 'c3'))
    const [summary] = (await journal.turns()).turns
    expect(summary).toMatchObject({ turnId: 't1', calls: 3 })
    // c2 has no result: repair closes exactly that call (and the turn, which never ended).
    expect(await journal.repair({ hosts: 'all' })).toEqual({ results: 1, turns: 1 })
    const closed = (await journal.read('t1')).filter((event) => event.kind === 'tool/result').map((event) => event.callId)
    expect(closed).toEqual(['c1', 'c3', 'c2'])
  })

  it('refuses bounds that are not positive integers', () => {
    expect(() => memoryJournal({ maxTurns: 0 })).toThrow('maxTurns must be a positive integer')
    expect(() => memoryJournal({ maxBytes: Number.NaN })).toThrow('maxBytes must be a positive integer')
  })
})

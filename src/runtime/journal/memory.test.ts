import { describe, expect, it } from 'vitest'
import { begin, call, describeJournalContract, now, result } from './contract.test-suite.js'
import { memoryJournal } from './memory.js'
import type { JournalStore } from './types.js'

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

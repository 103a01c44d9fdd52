import { describe, expect, it } from 'vitest'
import { begin, call, result } from './contract.test-suite.js'
import { memoryJournal } from './memory.js'
import { addCall, callHash, callIndex, emptyTurnLog } from './turn-log.js'

describe('a turn log\'s table of call ids', () => {
  it('finds each of thousands of calls at its place, and none it was not given, across every growth', () => {
    const log = emptyTurnLog()
    for (let index = 0; index < 5_000; index += 1) {
      const id = `call_${index}`
      expect(callIndex(log, id)).toBe(-1)
      expect(addCall(log, id)).toBe(index)
      // Found at once, also the call whose entry made the table grow (its slot was the old table's);
      // the turn's first call is kept outside the table, as the store's latest (`lastCall`).
      if (index > 0) expect(callIndex(log, id)).toBe(index)
    }
    // A fresh string of the same text finds the call: ids are compared by what they hold.
    for (let index = 0; index < 5_000; index += 1) expect(callIndex(log, ['call_', index].join(''))).toBe(index)
    for (let index = 5_000; index < 5_100; index += 1) expect(callIndex(log, `call_${index}`)).toBe(-1)
    expect(log.tags!.length).toBe(16_384)
    expect(log.table!.length).toBe(2 * 16_384)
  })

  it('keeps two ids whose hashes are equal apart', () => {
    // Found by trying call_0, call_1, …: the first pair with one 32-bit hash.
    const [first, second] = ['call_946719', 'call_1199484']
    expect(callHash(first)).toBe(callHash(second))
    const log = emptyTurnLog()
    addCall(log, 'call_0')
    expect(addCall(log, first)).toBe(1)
    expect(callIndex(log, second)).toBe(-1)
    expect(addCall(log, second)).toBe(2)
    expect([callIndex(log, first), callIndex(log, second), callIndex(log, 'call_0')]).toEqual([1, 2, 0])
  })

  it('lets a memory journal refuse a reused id in a turn of thousands of calls, and pair every result', async () => {
    const journal = memoryJournal()
    let seq = 0
    await journal.append(begin('t1', ++seq))
    for (let index = 0; index < 3_000; index += 1) await journal.append(call('t1', ++seq, `c${index}`))
    for (const index of [0, 1, 1_024, 2_999]) {
      await expect(journal.append(call('t1', ++seq, `c${index}`))).rejects.toMatchObject({ code: 'JOURNAL_DUPLICATE' })
    }
    for (let index = 0; index < 3_000; index += 1) await journal.append(result('t1', ++seq, `c${index}`))
    await expect(journal.append(result('t1', ++seq, 'c7'))).rejects.toMatchObject({ code: 'JOURNAL_DUPLICATE' })
    const events = await journal.read('t1')
    expect(events.filter((event) => event.kind === 'tool/result')).toHaveLength(3_000)
    expect(await journal.repair({ hosts: 'all' })).toEqual({ results: 0, turns: 1 })
  })
})

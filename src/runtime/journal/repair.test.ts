import { describe, expect, it } from 'vitest'
import { countRepaired, planRepair, UNKNOWN_OUTCOME_TEXT } from './repair.js'

describe('planRepair', () => {
  it('numbers results, then the interrupted end, after the last event of each turn', () => {
    const planned = planRepair({
      openCalls: [
        { turnId: 't1', callId: 'c1' },
        { turnId: 't2', callId: 'c9' },
        { turnId: 't1', callId: 'c2' },
      ],
      openTurns: ['t1'],
      maxSeq: new Map([
        ['t1', 4],
        ['t2', 7],
      ]),
      at: 5,
    })
    expect(planned.map((event) => [event.turnId, event.seq, event.kind])).toEqual([
      ['t1', 5, 'tool/result'],
      ['t2', 8, 'tool/result'],
      ['t1', 6, 'tool/result'],
      ['t1', 7, 'turn/end'],
    ])
    expect(planned[0]).toEqual({
      kind: 'tool/result',
      turnId: 't1',
      seq: 5,
      at: 5,
      callId: 'c1',
      status: 'failed',
      code: 'OUTCOME_UNKNOWN',
      content: [{ type: 'text', text: UNKNOWN_OUTCOME_TEXT }],
      durationMs: 0,
    })
    expect(countRepaired(planned)).toEqual({ results: 3, turns: 1 })
  })

  it('says the tool may or may not have run', () => {
    expect(UNKNOWN_OUTCOME_TEXT).toMatch(/may or may not have run/)
  })
})

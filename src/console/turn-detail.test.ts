import { describe, expect, it } from 'vitest'
import type { JournalEvent } from '../seams/journal.js'
import { turnDetail } from './turn-detail.js'

const T = 'turn-1'
const begin: JournalEvent = { kind: 'turn/begin', turnId: T, seq: 1, at: 1_000, session: 's', subjectId: 'ann', generation: 1, owner: 'root' }

describe('turnDetail: the waterfall stretches of each call, from the journal', () => {
  it('cuts a settled call into waited, approval, waited, body and commit, from its start (durationMs before its result)', () => {
    const detail = turnDetail(T, [
      begin,
      { kind: 'tool/call', turnId: T, seq: 2, at: 1_010, callId: 'c', name: 'tag', arguments: '{}', generation: 1 },
      { kind: 'approval/asked', turnId: T, seq: 3, at: 1_012, callId: 'c', name: 'tag', reason: 'asks', summary: 'tag it' },
      { kind: 'approval/decided', turnId: T, seq: 4, at: 1_400, callId: 'c', decision: 'allowed-once' },
      { kind: 'tool/result', turnId: T, seq: 5, at: 1_600, callId: 'c', status: 'completed', content: [], durationMs: 600, bodyAt: 1_402, bodyMs: 150 },
      { kind: 'turn/end', turnId: T, seq: 6, at: 1_700, reason: 'ended' },
    ])
    const [call] = detail.calls
    // It began at 1000 (a batch call waiting for a slot journals its tool/call later).
    expect(call!.startedAt).toBe(1_000)
    expect(call!.segments).toEqual([
      { kind: 'waited', from: 1_000, to: 1_012 },
      { kind: 'approval', from: 1_012, to: 1_400 },
      { kind: 'waited', from: 1_400, to: 1_402 },
      { kind: 'body', from: 1_402, to: 1_552 },
      { kind: 'commit', from: 1_552, to: 1_600 },
    ])
    expect(call!.approval).toMatchObject({ decision: 'allowed-once', askedAt: 1_012, decidedAt: 1_400 })
    expect(detail).toMatchObject({ begunAt: 1_000, endedAt: 1_700 })
  })

  it('leaves the stretch an open call is in open, and closes it at the end of a turn that ended without it', () => {
    const events: JournalEvent[] = [
      begin,
      { kind: 'tool/call', turnId: T, seq: 2, at: 1_010, callId: 'run', name: 'slow', arguments: '{}', generation: 1 },
      { kind: 'tool/call', turnId: T, seq: 3, at: 1_020, callId: 'ask', name: 'tag', arguments: '{}', generation: 1 },
      { kind: 'approval/asked', turnId: T, seq: 4, at: 1_030, callId: 'ask', name: 'tag', reason: 'asks', summary: 'tag it' },
    ]
    const open = turnDetail(T, events, undefined, 2_000)
    expect(open.now).toBe(2_000)
    expect(open.calls.map((c) => c.segments)).toEqual([
      [{ kind: 'running', from: 1_010 }],
      [
        { kind: 'waited', from: 1_020, to: 1_030 },
        { kind: 'approval', from: 1_030 },
      ],
    ])
    const interrupted = turnDetail(T, [...events, { kind: 'turn/end', turnId: T, seq: 5, at: 1_900, reason: 'interrupted' }])
    expect(interrupted.calls[0]!.segments).toEqual([{ kind: 'running', from: 1_010, to: 1_900 }])
  })

  it('gives a call that ran no body (denied) only its wait, and keeps a question with its answer on its call', () => {
    const detail = turnDetail(T, [
      begin,
      { kind: 'tool/call', turnId: T, seq: 2, at: 1_000, callId: 'd', name: 'wipe', arguments: '{}', generation: 1 },
      { kind: 'tool/result', turnId: T, seq: 3, at: 1_005, callId: 'd', status: 'denied', code: 'DENIED', policy: 'permission', content: [], durationMs: 5 },
      { kind: 'tool/call', turnId: T, seq: 4, at: 1_010, callId: 'q', name: 'paint', arguments: '{}', generation: 1 },
      { kind: 'question/asked', turnId: T, seq: 5, at: 1_050, callId: 'q', questionId: 'q1', name: 'paint', message: 'Which colour?', schema: '{}' },
      { kind: 'question/answered', turnId: T, seq: 6, at: 1_350, callId: 'q', questionId: 'q1', action: 'accept', content: '{"colour":"green"}' },
    ])
    expect(detail.calls[0]!.segments).toEqual([{ kind: 'waited', from: 1_000, to: 1_005 }])
    expect(detail.calls[1]!.questions).toEqual([{ questionId: 'q1', message: 'Which colour?', askedAt: 1_050, answeredAt: 1_350, action: 'accept', content: '{"colour":"green"}' }])
  })
})

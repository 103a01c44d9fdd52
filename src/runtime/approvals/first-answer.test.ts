import { describe, expect, it } from 'vitest'
import type { ApprovalAnswer, ApprovalPort, ApprovalRequest } from '../../seams/approval.js'
import { firstAnswer } from './first-answer.js'

function request(signal = new AbortController().signal): ApprovalRequest {
  return { callId: 'c1', name: 'wipe', arguments: {}, summary: 'wipe', reason: 'destructive', session: 's1', signal }
}

/** A port that answers when told to, and records whether its question was withdrawn. */
function manualPort(): ApprovalPort & { answer(a: ApprovalAnswer): void; withdrawn: boolean } {
  let answer: (a: ApprovalAnswer) => void = () => {}
  const port = {
    withdrawn: false,
    answer: (a: ApprovalAnswer) => answer(a),
    request(req: ApprovalRequest) {
      req.signal.addEventListener('abort', () => {
        port.withdrawn = true
      })
      return new Promise<ApprovalAnswer>((resolve) => {
        answer = resolve
      })
    },
  }
  return port
}

describe('firstAnswer', () => {
  it('takes the first answer and withdraws the question from the other ports', async () => {
    const terminal = manualPort()
    const browser = manualPort()
    const asking = firstAnswer([terminal, browser]).request(request())
    await Promise.resolve()
    browser.answer('allowed-session')
    expect(await asking).toBe('allowed-session')
    expect(terminal.withdrawn).toBe(true)
    // A late answer from the withdrawn port changes nothing.
    terminal.answer('rejected')
    expect(await asking).toBe('allowed-session')
  })

  it('passes over a port that throws, and fails only when every port failed', async () => {
    const broken: ApprovalPort = { request: () => Promise.reject(new Error('no terminal')) }
    const browser = manualPort()
    const asking = firstAnswer([broken, browser]).request(request())
    await new Promise((resolve) => setTimeout(resolve, 1))
    browser.answer('rejected')
    expect(await asking).toBe('rejected')
    await expect(firstAnswer([broken, broken]).request(request())).rejects.toThrow('no terminal')
  })

  it('passes over a port that defers while another can answer, and defers when none answers', async () => {
    const later: ApprovalPort = { request: () => Promise.resolve('deferred') }
    const browser = manualPort()
    const asking = firstAnswer([later, browser]).request(request())
    await new Promise((resolve) => setTimeout(resolve, 1))
    browser.answer('allowed-once')
    expect(await asking).toBe('allowed-once')
    const broken: ApprovalPort = { request: () => Promise.reject(new Error('no terminal')) }
    expect(await firstAnswer([later, broken]).request(request())).toBe('deferred')
  })

  it('asks only available ports, and is unavailable when none is', async () => {
    const off: ApprovalPort = { available: false, request: () => Promise.resolve('allowed-once') }
    const on = manualPort()
    const ports = firstAnswer([off, on])
    expect(ports.available).toBe(true)
    const asking = ports.request(request())
    await Promise.resolve()
    on.answer('rejected')
    expect(await asking).toBe('rejected')
    expect(firstAnswer([off]).available).toBe(false)
  })

  it('withdraws every question when the call is aborted', async () => {
    const a = manualPort()
    const b = manualPort()
    const controller = new AbortController()
    void firstAnswer([a, b]).request(request(controller.signal))
    await Promise.resolve()
    controller.abort()
    expect([a.withdrawn, b.withdrawn]).toEqual([true, true])
  })
})

import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { ApprovalRequest } from '../seams/approval.js'
import { styleFor } from './io.js'
import { terminalApproval } from './prompt.js'

describe('the terminal approval prompt', () => {
  const style = styleFor(new PassThrough(), {})
  const request = (signal = new AbortController().signal): ApprovalRequest => ({
    callId: 'c1',
    name: 'write_file',
    arguments: { path: 'notes.md' },
    summary: 'write_file path="notes.md"',
    reason: 'it would overwrite notes.md',
    session: 's1',
    signal,
  })

  async function answer(...lines: string[]): Promise<{ decision: string; shown: string }> {
    return answerTo(request(), ...lines)
  }

  async function answerTo(req: ApprovalRequest, ...lines: string[]): Promise<{ decision: string; shown: string }> {
    const input = new PassThrough()
    const output = new PassThrough()
    let shown = ''
    output.on('data', (chunk) => (shown += chunk))
    const port = terminalApproval({ input, output, style })
    const decision = port.request(req)
    for (const text of lines) {
      await new Promise((resolve) => setImmediate(resolve))
      input.write(`${text}\n`)
    }
    input.end()
    return { decision: await decision, shown }
  }

  it('asks with the summary and the reason, and maps y, s and n', async () => {
    const yes = await answer('y')
    expect(yes.decision).toBe('allowed-once')
    expect(yes.shown).toContain('approval needed: it would overwrite notes.md')
    expect(yes.shown).toContain('Allow write_file path="notes.md"? [y]es once / [s]ession / [n]o ')
    expect((await answer('s')).decision).toBe('allowed-session')
    expect((await answer('NO')).decision).toBe('rejected')
  })

  it('offers only the answers the request offers: no session for a tool that asks every time', async () => {
    const always = { ...request(), answers: ['allowed-once', 'rejected'] } as const
    const session = await answerTo(always, 's', 'y')
    expect(session.shown).toContain('Allow write_file path="notes.md"? [y]es / [n]o ')
    expect(session.shown).toContain('answer y or n')
    expect(session.decision).toBe('allowed-once')
    const once = await answerTo({ ...request(), answers: ['allowed-session', 'rejected'] }, 'y')
    expect(once.shown).toContain('[y]es for this session / [n]o ')
    expect(once.decision).toBe('allowed-session')
  })

  it('rejects on an empty answer, at end of input and on abort, and asks again after an unknown answer', async () => {
    expect((await answer('')).decision).toBe('rejected')
    expect((await answer()).decision).toBe('rejected')
    const retry = await answer('maybe', 'yes')
    expect(retry.decision).toBe('allowed-once')
    expect(retry.shown).toContain('answer y, s or n')
    const controller = new AbortController()
    const pending = terminalApproval({ input: new PassThrough(), output: new PassThrough(), style }).request(request(controller.signal))
    controller.abort()
    expect(await pending).toBe('rejected')
  })

  it('shows control characters of the summary and the reason as escapes, so they cannot redraw the question', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    let shown = ''
    output.on('data', (chunk) => (shown += chunk))
    const port = terminalApproval({ input, output, style })
    const decision = port.request({ ...request(), summary: 'write_file path="a\u001b[2K\rAllow read_file"', reason: 'overwrites\u001b]0;t\u0007' })
    await new Promise((resolve) => setImmediate(resolve))
    input.write('n\n')
    input.end()
    expect(await decision).toBe('rejected')
    expect([...shown].some((c) => c === '\u001b' || c === '\r' || c === '\u0007')).toBe(false)
    expect(shown).toContain('Allow write_file path="a\\u001b[2K\\u000dAllow read_file"?')
  })
})

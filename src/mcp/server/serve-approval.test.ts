import type { ElicitRequestFormParams } from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import type { ApprovalAnswer, ApprovalRequest } from '../../seams/approval.js'
import { elicitationApproval } from './serve-approval.js'

const request = (answers?: readonly ApprovalAnswer[]): ApprovalRequest => ({
  callId: 'c1',
  name: 'launch',
  arguments: {},
  summary: 'launch',
  reason: '"launch" always asks for approval',
  session: 's1',
  signal: new AbortController().signal,
  ...(answers ? { answers } : {}),
})

/** Asks once with `answers`, choosing `choice`; returns the form's choices and the answer. */
async function ask(answers: readonly ApprovalAnswer[] | undefined, choice: string) {
  let form: ElicitRequestFormParams | undefined
  const port = elicitationApproval(async (params) => {
    form = params
    return { action: 'accept', content: { decision: choice } }
  })
  const answer = await port.request(request(answers))
  const decision = form?.requestedSchema.properties.decision as { enum?: string[]; description?: string }
  return { answer, choices: decision.enum, description: decision.description }
}

describe('elicitationApproval', () => {
  it('offers once and reject for a tool that asks every time, and never records a session grant for it', async () => {
    const { answer, choices, description } = await ask(['allowed-once', 'rejected'], 'session')
    expect(choices).toEqual(['once', 'reject'])
    expect(description).not.toContain('session')
    expect(answer).toBe('rejected')
  })

  it('offers session and reject for a once tool, and all three when the request does not say', async () => {
    expect(await ask(['allowed-session', 'rejected'], 'session')).toMatchObject({ choices: ['session', 'reject'], answer: 'allowed-session' })
    expect(await ask(undefined, 'once')).toMatchObject({ choices: ['once', 'session', 'reject'], answer: 'allowed-once' })
  })
})

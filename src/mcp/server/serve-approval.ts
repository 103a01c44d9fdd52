import type { ClientCapabilities, ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/server'
import { ALL_ANSWERS, type ApprovalAnswer, type ApprovalPort, type ApprovalRequest } from '../../seams/approval.js'
import { redactText } from '../../runtime/base/redact.js'

/** Sends one `elicitation/create` request to the client, related to the tool call being served. */
export type Elicit = (params: ElicitRequestFormParams, options: { signal: AbortSignal; timeout: number }) => Promise<ElicitResult>

/**
 * The SDK's own request timeout stays out of the way: the pipeline bounds the question with the
 * turn's `approvalTimeoutMs` by aborting the request's signal.
 */
const NO_SDK_TIMEOUT = 2_147_483_647

/** The form's choices, in this order, for the answers a request offers. */
const CHOICES: readonly (readonly [string, ApprovalAnswer, string])[] = [
  ['once', 'allowed-once', 'once: allow this call'],
  ['session', 'allowed-session', 'session: allow this tool for the rest of the session'],
  ['reject', 'rejected', 'reject: deny it'],
]

/**
 * Form elicitation is supported when the client declared `elicitation.form`, or a bare
 * `elicitation: {}` (which the spec reads as form support).
 */
export function supportsFormElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined
  if (elicitation === undefined || elicitation === null || typeof elicitation !== 'object') return false
  return elicitation.form !== undefined || elicitation.url === undefined
}

/**
 * The approval question as a form: one enum field with the choices the request offers (`once`,
 * `session`, `reject`). Asked through `elicitation/create` on a 2025-era connection and as an
 * `input_required` round on a 2026-07-28 one.
 */
export function approvalForm(request: Pick<ApprovalRequest, 'summary' | 'reason' | 'answers'>): ElicitRequestFormParams {
  const choices = choicesFor(request.answers)
  return {
    mode: 'form',
    message: redactText(`Allow this tool call?\n${request.summary}\nWhy approval is needed: ${request.reason}`),
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Decision',
          description: choices.map(([, , text]) => text).join('; '),
          enum: choices.map(([value]) => value),
        },
      },
      required: ['decision'],
    },
  }
}

/**
 * The answer a form reply gives: accepting `once` or `session` (when offered) allows; declining,
 * cancelling, choosing `reject` or anything not offered is `rejected`.
 */
export function answerOf(result: { action: string; content?: Record<string, unknown> }, offered: readonly ApprovalAnswer[] | undefined): ApprovalAnswer {
  if (result.action !== 'accept') return 'rejected'
  const decision = result.content?.decision
  return choicesFor(offered).find(([value]) => value === decision)?.[1] ?? 'rejected'
}

function choicesFor(offered: readonly ApprovalAnswer[] | undefined) {
  const answers = offered ?? ALL_ANSWERS
  return CHOICES.filter(([, answer]) => answers.includes(answer))
}

/**
 * An approval port that asks the MCP client's user through form elicitation (see `approvalForm`);
 * a failed request throws, which the pipeline records as `unavailable` (fail closed).
 */
export function elicitationApproval(elicit: Elicit): ApprovalPort {
  return {
    async request(request: ApprovalRequest): Promise<ApprovalAnswer> {
      const result = await elicit(approvalForm(request), { signal: request.signal, timeout: NO_SDK_TIMEOUT })
      return answerOf(result, request.answers)
    },
  }
}

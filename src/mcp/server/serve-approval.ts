import type { ClientCapabilities, ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/server'
import { ALL_ANSWERS, type ApprovalAnswer, type ApprovalPort, type ApprovalRequest } from '../../runtime/approval-types.js'

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
 * An approval port that asks the MCP client's user through form elicitation: one enum field
 * with the choices the request offers (`once`, `session`, `reject`). Accepting `once` or `session`
 * allows; declining, cancelling or choosing `reject` is `rejected`; a failed request throws, which
 * the pipeline records as `unavailable` (fail closed).
 */
export function elicitationApproval(elicit: Elicit): ApprovalPort {
  return {
    async request(request: ApprovalRequest): Promise<ApprovalAnswer> {
      const offered = request.answers ?? ALL_ANSWERS
      const choices = CHOICES.filter(([, answer]) => offered.includes(answer))
      const result = await elicit(
        {
          mode: 'form',
          message: `Allow this tool call?\n${request.summary}\nWhy approval is needed: ${request.reason}`,
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
        },
        { signal: request.signal, timeout: NO_SDK_TIMEOUT },
      )
      if (result.action !== 'accept') return 'rejected'
      const decision = result.content?.decision
      return choices.find(([value]) => value === decision)?.[1] ?? 'rejected'
    },
  }
}

import type { ClientCapabilities, ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/server'
import type { ApprovalAnswer, ApprovalPort, ApprovalRequest } from '../../runtime/approval-types.js'

/** Sends one `elicitation/create` request to the client, related to the tool call being served. */
export type Elicit = (params: ElicitRequestFormParams, options: { signal: AbortSignal; timeout: number }) => Promise<ElicitResult>

/**
 * The SDK's own request timeout stays out of the way: the pipeline bounds the question with the
 * turn's `approvalTimeoutMs` by aborting the request's signal.
 */
const NO_SDK_TIMEOUT = 2_147_483_647

const CHOICES = ['once', 'session', 'reject'] as const

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
 * (`once`, `session`, `reject`). Accepting `once` or `session` allows; declining, cancelling or
 * choosing `reject` is `rejected`; a failed request throws, which the pipeline records as
 * `unavailable` (fail closed).
 */
export function elicitationApproval(elicit: Elicit): ApprovalPort {
  return {
    async request(request: ApprovalRequest): Promise<ApprovalAnswer> {
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
                description: 'once: allow this call; session: allow this tool for the rest of the session; reject: deny it',
                enum: [...CHOICES],
              },
            },
            required: ['decision'],
          },
        },
        { signal: request.signal, timeout: NO_SDK_TIMEOUT },
      )
      if (result.action !== 'accept') return 'rejected'
      const decision = result.content?.decision
      if (decision === 'once') return 'allowed-once'
      if (decision === 'session') return 'allowed-session'
      return 'rejected'
    },
  }
}

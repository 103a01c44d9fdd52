import { createHash } from 'node:crypto'
import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server'
import type { ApprovalAnswer, ApprovalPort, ApprovalReply, ApprovalRequest } from '../../seams/approval.js'
import { stableStringify } from '../../features/schema.js'
import { answerOf, approvalForm, supportsFormElicitation } from './serve-approval.js'
import { createSealedStateCodec, type SealedStateCodec } from './sealed-state.js'

/** What an `input_required` round carries back to the server, sealed (AES-256-GCM) so a client can neither read nor forge it. */
export interface ApprovalRoundState {
  /** The parked call's resume token. */
  readonly token: string
  readonly callId: string
  /** The tool the question is about: a retry for another tool is refused. */
  readonly name: string
  /** The answers the question offered. */
  readonly answers?: readonly ApprovalAnswer[]
  /** A digest of the arguments the first request sent: a retry with others is refused (the parked call runs these). */
  readonly arguments: string
}

/** A digest of a request's tool arguments, whatever their key order. */
export function argumentsDigest(args: unknown): string {
  return createHash('sha256').update(stableStringify(args ?? {})).digest('base64url')
}

/** The key every round's `inputResponses` carries the approval form's reply under. */
const KEY = 'approval'
/** A person may take a while to answer; the parked call itself expires after the root's `approvalTtlMs`. */
const STATE_TTL_SECONDS = 60 * 60

/**
 * Approval on a 2026-07-28 connection, where the server cannot send `elicitation/create` itself:
 * the call is parked in the journal (as a deferred approval is), the call's answer is an
 * `input_required` result holding the approval form and a sealed round state, and the client's
 * retry (with the user's reply in `inputResponses`) decides the parked call and resumes it. Nothing
 * is held in memory between the rounds, so any request, on any connection to this process, can
 * carry the retry.
 */
export class ApprovalRounds {
  /** Seals every round's state, approval rounds' and held calls' (`HeldCalls`) alike. */
  readonly codec: SealedStateCodec<unknown>

  /** `stateKey`: the key states are sealed with (`McpServeOptions.requestStateKey`), else one for this process. */
  constructor(stateKey?: string | Uint8Array) {
    this.codec = createSealedStateCodec<unknown>({ secret: stateKey, ttlSeconds: STATE_TTL_SECONDS })
  }

  /** For `ServerOptions.requestState.verify`: a state that fails verification is refused before the handler runs. */
  readonly verify = async (state: string): Promise<unknown> => this.codec.open(state)

  /** Whether this 2026-era request's client can answer a form (its envelope declares form elicitation). */
  canAsk(ctx: ServerContext): boolean {
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
    return supportsFormElicitation(envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)
  }

  /** A port that parks every question (`deferred`) and remembers the last one, to ask it as a round. */
  parking(): { port: ApprovalPort; question(): ApprovalRequest | undefined } {
    let asked: ApprovalRequest | undefined
    return {
      port: {
        async request(request: ApprovalRequest): Promise<ApprovalReply> {
          asked = request
          return 'deferred'
        },
      },
      question: () => asked,
    }
  }

  /** The round state of a retry, when this request is one. */
  state(ctx: ServerContext, name: string): ApprovalRoundState | undefined {
    const state = ctx.mcpReq.requestState<ApprovalRoundState | string>()
    // A held call's round (`HeldCalls`) is not an approval round.
    if (state === undefined || (typeof state === 'object' && state !== null && 'held' in state)) return undefined
    if (typeof state !== 'object' || state === null || typeof state.token !== 'string' || state.name !== name) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'the requestState does not belong to a call of this tool')
    }
    return state
  }

  /** The user's answer in a retry: anything but an accepted, offered choice is `rejected` (fail closed). */
  answer(ctx: ServerContext, state: ApprovalRoundState): ApprovalAnswer {
    const reply = inputResponse(ctx.mcpReq.inputResponses, KEY)
    if (reply.kind !== 'elicit') return 'rejected'
    return answerOf({ action: reply.action, content: reply.content }, state.answers)
  }

  /** The `input_required` result asking `question` about the parked call `token`, parked with the request's `args`. */
  async ask(question: ApprovalRequest, token: string, _ctx: ServerContext, args: unknown): Promise<CallToolResult> {
    const state: ApprovalRoundState = {
      token,
      callId: question.callId,
      name: question.name,
      arguments: argumentsDigest(args),
      ...(question.answers ? { answers: [...question.answers] } : {}),
    }
    const result: InputRequiredResult = inputRequired({
      inputRequests: { [KEY]: inputRequired.elicit(approvalForm(question)) },
      requestState: this.codec.mint(state),
    })
    // The SDK's tools/call handler type is the complete result; on a 2026 request it also accepts this one.
    return result as unknown as CallToolResult
  }
}

import type { ClientCapabilities, ElicitRequestFormParams, Server, ServerContext } from '@modelcontextprotocol/server'
import { redactText } from '../../runtime/base/redact.js'
import type { ClientRoot, QuestionAnswer, QuestionRequest, SampleRequest, SampleResult } from '../../seams/questions.js'
import type { QuestionPort } from '../../seams/types.js'
import { supportsFormElicitation } from './serve-approval.js'

/** The question's deadline is the pipeline's: it aborts the request's signal (see `serve-approval.ts`). */
const NO_SDK_TIMEOUT = 2_147_483_647

/** A tool's question (`ctx.ask`) as a form elicitation: its message (redacted) and schema as given. */
export function questionForm(request: Pick<QuestionRequest, 'message' | 'schema'>): ElicitRequestFormParams {
  return { mode: 'form', message: redactText(request.message), requestedSchema: request.schema as ElicitRequestFormParams['requestedSchema'] }
}

/** A body's sampling request as `sampling/createMessage` params (as given: the client shows them to its user). */
export function samplingParams(request: Pick<SampleRequest, 'params'>): Record<string, unknown> {
  return { ...request.params } as Record<string, unknown>
}

/** What the client declared of the three a body can ask for: form elicitation, sampling, roots. */
export interface ClientAsks {
  readonly elicit: boolean
  readonly sample: boolean
  readonly roots: boolean
}

/** The asks `capabilities` allow. */
export function clientAsks(capabilities: ClientCapabilities | undefined): ClientAsks {
  return { elicit: supportsFormElicitation(capabilities), sample: capabilities?.sampling !== undefined, roots: capabilities?.roots !== undefined }
}

/** Sends one request to the client, related to the tool call being served (so over HTTP it travels on the call's stream). */
export type SendToClient = (request: { method: string; params: Record<string, unknown> }, options: { signal: AbortSignal; timeout: number }) => Promise<unknown>

/**
 * Where a running tool's questions and requests (`ctx.ask`, `ctx.sample`, `ctx.roots`) go on a
 * 2025-era connection: the client, through `elicitation/create`, `sampling/createMessage` and
 * `roots/list`, each only when it declared the capability at `initialize` (else the question is
 * declined and the request refused, by the session's turn). A 2026-07-28 request asks through
 * `input_required` rounds instead (`HeldCalls`): none here.
 */
export function questionPortFor(server: Server, ctx: ServerContext): QuestionPort | undefined {
  if (ctx.mcpReq.envelope !== undefined) return undefined
  const asks = clientAsks(server.getClientCapabilities())
  if (!asks.elicit && !asks.sample && !asks.roots) return undefined
  // The method is one of three this module names; the SDK's overloads want it as a literal.
  const send: SendToClient = (request, options) => ctx.mcpReq.send(request as never, options)
  return clientQuestions(send, asks)
}

/** A question port that sends what `asks` allows to the client; the replies are handed on as they came (the pipeline checks them). */
export function clientQuestions(send: SendToClient, asks: ClientAsks): QuestionPort {
  const options = (signal: AbortSignal) => ({ signal, timeout: NO_SDK_TIMEOUT })
  return {
    ...(asks.elicit
      ? {
          elicit: async (request: QuestionRequest): Promise<QuestionAnswer> =>
            (await send({ method: 'elicitation/create', params: { ...questionForm(request) } }, options(request.signal))) as QuestionAnswer,
        }
      : {}),
    ...(asks.sample
      ? {
          sample: async (request: SampleRequest): Promise<SampleResult> =>
            (await send({ method: 'sampling/createMessage', params: samplingParams(request) }, options(request.signal))) as SampleResult,
        }
      : {}),
    ...(asks.roots
      ? {
          roots: async (request: { signal: AbortSignal }): Promise<readonly ClientRoot[]> => {
            const result = (await send({ method: 'roots/list', params: {} }, options(request.signal))) as { roots?: unknown }
            return (Array.isArray(result?.roots) ? result.roots : []) as ClientRoot[]
          },
        }
      : {}),
  }
}

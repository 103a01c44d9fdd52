import type { ElicitRequestFormParams } from '@modelcontextprotocol/server'
import { redactText } from '../../runtime/base/redact.js'
import type { QuestionAnswer, QuestionRequest } from '../../seams/questions.js'
import type { QuestionPort } from '../../seams/types.js'
import type { Elicit } from './serve-approval.js'

/** The question's deadline is the pipeline's: it aborts the request's signal (see `serve-approval.ts`). */
const NO_SDK_TIMEOUT = 2_147_483_647

/** A tool's question (`ctx.ask`) as a form elicitation: its message (redacted) and schema as given. */
export function questionForm(request: Pick<QuestionRequest, 'message' | 'schema'>): ElicitRequestFormParams {
  return { mode: 'form', message: redactText(request.message), requestedSchema: request.schema as ElicitRequestFormParams['requestedSchema'] }
}

/**
 * A question port that asks the MCP client's user through `elicitation/create` (a 2025-era client
 * that declared form elicitation). The reply is handed on as it came; the pipeline checks it
 * against the schema.
 */
export function elicitationQuestions(elicit: Elicit): QuestionPort {
  return {
    async elicit(request: QuestionRequest): Promise<QuestionAnswer> {
      const result = await elicit(questionForm(request), { signal: request.signal, timeout: NO_SDK_TIMEOUT })
      return result as QuestionAnswer
    },
  }
}

import { randomUUID } from 'node:crypto'
import { SeamError } from '../errors.js'
import { redactedContent } from '../runtime/base/privacy.js'
import { redactText } from '../runtime/base/redact.js'
import type { Root } from '../runtime/root.js'
import type { QuestionPort } from '../seams/types.js'
import type { TryRequest, TryResult } from './types.js'

/**
 * Runs one call from the console's form through the whole pipeline, as the named principal, in a
 * turn of its own (origin `console`): journaled like any call, asking for approval like any call,
 * and a tool's questions (`ctx.ask`) on `question` when there is one.
 */
export async function runTry(root: Root, request: TryRequest, question?: QuestionPort): Promise<TryResult> {
  const subjectId = typeof request?.subjectId === 'string' ? request.subjectId.trim() : ''
  if (subjectId === '') throw new SeamError('INVALID_OPTIONS', 'name the principal the call runs as (subjectId)')
  if (typeof request.tool !== 'string' || request.tool === '') throw new SeamError('INVALID_OPTIONS', 'name the tool to call')
  if (typeof request.arguments !== 'string') throw new SeamError('INVALID_OPTIONS', 'send the arguments as JSON text')
  const session = typeof request.session === 'string' && request.session.trim() !== '' ? request.session.trim() : 'console'
  const turn = await root.beginTurn({ session, principal: { subjectId, roles: [] }, origin: { kind: 'console' }, ...(question ? { ports: { question } } : {}) })
  try {
    const outcome = await turn.tools.execute({ callId: `console-${randomUUID().slice(0, 8)}`, name: request.tool, arguments: request.arguments })
    return {
      turnId: turn.turnId,
      outcome: {
        callId: outcome.callId,
        name: outcome.name,
        status: outcome.status,
        ...(outcome.code !== undefined ? { code: outcome.code } : {}),
        ...(outcome.reason !== undefined ? { reason: redactText(outcome.reason) } : {}),
        // A failure's text (a thrown error, a block's feedback) is redacted; a completed call's content is the
        // tool's own, only scrubbed of known secret values like every console answer.
        content: (outcome.status === 'completed' ? [...outcome.content] : redactedContent(outcome.content)) as TryResult['outcome']['content'],
        durationMs: outcome.durationMs,
        generation: outcome.generation,
      },
    }
  } finally {
    await turn.end()
  }
}

/**
 * A question a running call asks (`ctx.ask`). The rules, in order:
 * - a malformed question throws `INVALID_QUESTION` to the body, and nothing is journaled;
 * - `question/asked` is journaled, then the turn's question port asked, and `question/answered`
 *   journaled with what the body gets, whatever happens: every question has exactly one answer;
 * - an unattended turn, or one whose question port cannot take structured questions (`elicit`),
 *   answers `decline` at once (`reason: 'unattended'` / `'no-port'`);
 * - the port has `timeoutMs` (the question's, else the root's `approvalTimeoutMs`): past it, or when
 *   the call is aborted, the answer is `cancel` (`timeout` / `aborted`) and the port's signal aborts;
 * - an `accept` whose content does not match the schema is `decline` (`invalid`); a port that
 *   throws, `cancel` (`failed`). Defaults fill absent fields of an accepted answer.
 */
import type { QuestionReason } from '../../seams/journal.js'
import type { QuestionAnswer, QuestionRequest, ToolQuestion } from '../../seams/questions.js'
import { ABORTED, TIMED_OUT, untilDue } from '../base/abort.js'
import type { CallState } from './state.js'
import { checkContent, checkQuestion } from '../../features/question-schema.js'

const DECLINE: QuestionAnswer = Object.freeze({ action: 'decline' })
const CANCEL: QuestionAnswer = Object.freeze({ action: 'cancel' })

/** Asks the call's `index`th question (1-based) under the body's `signal`. */
export async function askQuestion(state: CallState, signal: AbortSignal, input: unknown, index: number): Promise<QuestionAnswer> {
  checkQuestion(input)
  const question = input as ToolQuestion
  const { ctx, call } = state
  const { turn } = ctx
  const questionId = `q${index}`
  const base = { turnId: turn.turnId, callId: call.callId, questionId }
  await ctx.append({ ...base, kind: 'question/asked', seq: ctx.nextSeq(), at: Date.now(), name: call.name, message: question.message, schema: JSON.stringify(question.schema) })
  const { answer, reason } = await answerOf(state, signal, question, questionId)
  await ctx.append({
    ...base,
    kind: 'question/answered',
    seq: ctx.nextSeq(),
    at: Date.now(),
    action: answer.action,
    ...(answer.action === 'accept' ? { content: JSON.stringify(answer.content) } : {}),
    ...(reason === undefined ? {} : { reason }),
  })
  return answer
}

async function answerOf(state: CallState, signal: AbortSignal, question: ToolQuestion, questionId: string): Promise<{ answer: QuestionAnswer; reason?: QuestionReason }> {
  const { ctx, call } = state
  const { turn } = ctx
  if (turn.unattended) return { answer: DECLINE, reason: 'unattended' }
  const port = turn.ports.question
  if (port?.elicit === undefined) return { answer: DECLINE, reason: 'no-port' }
  if (signal.aborted) return { answer: CANCEL, reason: 'aborted' }
  const asking = new AbortController()
  const request: QuestionRequest = Object.freeze({
    questionId,
    callId: call.callId,
    name: call.name,
    turnId: turn.turnId,
    message: question.message,
    schema: question.schema,
    ...(question.key === undefined ? {} : { key: question.key }),
    signal: asking.signal,
  })
  const timeoutMs = question.timeoutMs ?? turn.policy.approvalTimeoutMs ?? ctx.limits.approvalTimeoutMs
  let given: unknown
  try {
    given = await untilDue(Promise.resolve(port.elicit(request)), signal, timeoutMs)
  } catch {
    asking.abort()
    return { answer: CANCEL, reason: signal.aborted ? 'aborted' : 'failed' }
  }
  if (given === TIMED_OUT || given === ABORTED) {
    asking.abort()
    return { answer: CANCEL, reason: given === TIMED_OUT ? 'timeout' : 'aborted' }
  }
  const action = (given as { action?: unknown } | null)?.action
  if (action === 'decline') return { answer: DECLINE }
  if (action === 'cancel') return { answer: CANCEL }
  if (action !== 'accept') return { answer: CANCEL, reason: 'failed' }
  const checked = checkContent(question.schema, (given as { content?: unknown }).content ?? {})
  if (!checked.ok) return { answer: DECLINE, reason: 'invalid' }
  return { answer: Object.freeze({ action: 'accept', content: checked.content }) }
}

import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type ElicitRequestFormParams,
  type GetPromptResult,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server'
import { messageOf } from '../../errors.js'
import { redactText, scrubValues } from '../../runtime/base/redact.js'
import type { SkillCapability } from '../../seams/capabilities.js'
import type { SealedStateCodec } from './sealed-state.js'
import { supportsFormElicitation } from './serve-approval.js'
import { promptOf, refuseUndeclared } from './serve-prompts.js'
import type { Root } from '../../runtime/root.js'

type Argument = NonNullable<SkillCapability['arguments']>[number]
type Askable = Argument & { readonly ask: NonNullable<Argument['ask']> }

/**
 * What a prompt's later `input_required` round carries back, sealed: the answers the person gave in
 * earlier rounds and the optional arguments they declined, so a client that retries with only the
 * newest answers loses none.
 */
export interface PromptRoundState {
  readonly prompt: string
  readonly answers: Readonly<Record<string, string>>
  readonly declined: readonly string[]
}

/** The arguments a `prompts/get` goes on with, or the `input_required` round asking for the missing ones. */
export type PromptArguments = { readonly arguments: Record<string, string> } | { readonly round: GetPromptResult }

/**
 * `prompts/get`: the arguments asked for first (`askForArguments`), then the prompt in the live
 * generation as `owner` sees it; or, on 2026-07-28, the round asking for them.
 */
export async function getPrompt(
  skill: SkillCapability,
  args: Record<string, string> | undefined,
  ctx: ServerContext,
  options: { readonly elicits: boolean; readonly codec: SealedStateCodec<unknown>; readonly root: Root; readonly owner: string },
): Promise<GetPromptResult> {
  const asked = await askForArguments(skill, args, ctx, options)
  if ('round' in asked) return asked.round
  const generation = options.root.activeGeneration
  await options.root.ingress.project(generation, options.owner)
  return promptOf(skill, asked.arguments, generation, options.owner, ctx.mcpReq.signal)
}

/** How long a 2025-era `elicitation/create` waits for the person: a prompt has no question deadline of its own. */
const ASK_TIMEOUT_MS = 10 * 60_000

/**
 * Fills the arguments a `prompts/get` left out that the skill says to ask (`ask:`), by asking the
 * person. On 2026-07-28 (a request with an envelope declaring form elicitation) that is an
 * `input_required` result with one form per missing argument, keyed as the skill names it; the
 * retry's `inputResponses` fill them, and a missing, wrong or invalid answer asks again (never an
 * error). On 2025-11-25 it is one `elicitation/create` per argument, related to the request, when
 * the client declared form elicitation (`elicits`). A client that cannot answer leaves the argument
 * missing (`promptOf` refuses a required one with `-32602`); a person who declines a required one
 * gets `-32602` saying so, and a declined optional one is left out.
 */
export async function askForArguments(
  skill: SkillCapability,
  args: Record<string, string> | undefined,
  ctx: ServerContext,
  options: { readonly elicits: boolean; readonly codec: SealedStateCodec<unknown> },
): Promise<PromptArguments> {
  const given = args ?? {}
  const askable = (skill.arguments ?? []).filter((a): a is Askable => typeof a.ask?.message === 'string')
  if (askable.length === 0) return { arguments: given }
  // Asking a person for an argument of a request that is refused anyway would waste their time.
  refuseUndeclared(skill, given)
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
  if (envelope !== undefined) {
    if (!supportsFormElicitation(envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)) return { arguments: given }
    return inRounds(skill, given, askable, ctx, options.codec)
  }
  if (!options.elicits) return { arguments: given }
  const filled = { ...given }
  for (const argument of askable) {
    if (typeof filled[argument.name] === 'string') continue
    let reply: unknown
    try {
      // The method is one the SDK knows; its overloads want it as a literal.
      reply = await ctx.mcpReq.send({ method: 'elicitation/create', params: { ...formOf(argument) } } as never, { signal: ctx.mcpReq.signal, timeout: ASK_TIMEOUT_MS })
    } catch (error) {
      if (ctx.mcpReq.signal.aborted) throw error
      // An optional argument the person could not be asked for is left out.
      if (argument.required !== true) continue
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${missing(skill, argument)} (asking the person failed: ${redactText(messageOf(error))})`)
    }
    const view = inputResponse({ reply }, 'reply')
    const value = view.kind === 'elicit' && view.action === 'accept' ? view.content?.[argument.name] : undefined
    if (typeof value === 'string') filled[argument.name] = value
    else if (argument.required === true) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${missing(skill, argument)} (${view.kind === 'elicit' && view.action !== 'accept' ? `the person answered ${view.action}` : 'the answer held no text for it'})`)
  }
  return { arguments: filled }
}

/** The 2026-07-28 rounds: the retry's answers (and the sealed ones of earlier rounds) fill the arguments, or the next round asks again. */
function inRounds(skill: SkillCapability, given: Record<string, string>, askable: readonly Askable[], ctx: ServerContext, codec: SealedStateCodec<unknown>): PromptArguments {
  const state = roundState(ctx, skill.name)
  const answers: Record<string, string> = { ...state?.answers }
  const declined = new Set(state?.declined)
  const again: Askable[] = []
  for (const argument of askable) {
    if (typeof given[argument.name] === 'string' || typeof answers[argument.name] === 'string' || declined.has(argument.name)) continue
    const view = inputResponse(ctx.mcpReq.inputResponses, keyOf(argument))
    const value = view.kind === 'elicit' && view.action === 'accept' ? view.content?.[argument.name] : undefined
    if (typeof value === 'string') answers[argument.name] = value
    else if (view.kind === 'elicit' && view.action !== 'accept') {
      if (argument.required === true) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${missing(skill, argument)} (the person answered ${view.action})`)
      declined.add(argument.name)
    } else again.push(argument)
  }
  if (again.length === 0) return { arguments: { ...answers, ...given } }
  const carried = Object.keys(answers).length > 0 || declined.size > 0
  const round = inputRequired({
    inputRequests: Object.fromEntries(again.map((argument) => [keyOf(argument), inputRequired.elicit(formOf(argument))])),
    ...(carried ? { requestState: codec.mint({ prompt: skill.name, answers, declined: [...declined] } satisfies PromptRoundState) } : {}),
  })
  // The SDK's prompts/get handler type is the complete result; on a 2026 request it also accepts this one.
  return { round: round as unknown as GetPromptResult }
}

/** The earlier rounds' answers of this prompt, when the retry carries them; a state of anything else is refused. */
function roundState(ctx: ServerContext, prompt: string): PromptRoundState | undefined {
  const state = ctx.mcpReq.requestState<PromptRoundState | undefined>()
  if (state === undefined) return undefined
  const ok =
    typeof state === 'object' &&
    state !== null &&
    state.prompt === prompt &&
    typeof state.answers === 'object' &&
    state.answers !== null &&
    Object.values(state.answers).every((v) => typeof v === 'string') &&
    Array.isArray(state.declined)
  if (!ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `the requestState does not belong to the prompt ${scrubValues(prompt)}`)
  return state
}

/** The input request's key: the skill's `ask.key`, else the argument's name. */
function keyOf(argument: Askable): string {
  return argument.ask.key ?? argument.name
}

/** One argument as a form: a single text field named after it (required when the argument is). */
function formOf(argument: Askable): ElicitRequestFormParams {
  const description = argument.ask.description ?? argument.description
  const field = { type: 'string' as const, ...(argument.ask.title !== undefined ? { title: argument.ask.title } : {}), ...(description !== undefined ? { description } : {}) }
  return {
    mode: 'form',
    message: redactText(argument.ask.message),
    requestedSchema: { type: 'object', properties: { [argument.name]: field }, ...(argument.required === true ? { required: [argument.name] } : {}) },
  }
}

function missing(skill: SkillCapability, argument: Argument): string {
  return `Missing required argument for prompt ${scrubValues(skill.name)}: ${argument.name}`
}

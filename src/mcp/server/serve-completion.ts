import { type CompleteResult, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'
import { messageOf } from '../../errors.js'
import { TIMED_OUT, untilDue } from '../../runtime/base/abort.js'
import { redactText, scrubValues } from '../../runtime/base/redact.js'
import { boundTemplate, type ResourceBinding } from '../../runtime/generations/resource-read.js'
import type { Root } from '../../runtime/root.js'
import type { SkillCapability } from '../../seams/capabilities.js'
import type { McpCatalog } from './serve-mapping.js'

/** The most values one `completion/complete` answer carries, as MCP allows. */
export const MAX_COMPLETIONS = 100

/** How long a template's completer may take before it is answered with none. */
export const COMPLETER_TIMEOUT_MS = 2000

/** A `completion/complete` answer. */
export type CompletionAnswer = CompleteResult

/** What the served generation offers a completion: its skills and, by URI template, its bound templates. */
export interface CompletionSource {
  skills(): Promise<ReadonlyMap<string, SkillCapability>>
  template(uriTemplate: string): Promise<ResourceBinding | undefined>
  /** Where a completer's failure is told, redacted and without the typed value. */
  log(line: string): void
}

/** The live generation as a `CompletionSource`, as `owner` sees it once `catalog` (the bridge's) is current. */
export function liveCompletionSource(root: Root, owner: string, catalog: () => Promise<McpCatalog>, log: (line: string) => void): CompletionSource {
  return {
    skills: async () => (await catalog()).skills,
    template: async (uriTemplate) => {
      await catalog()
      const generation = root.activeGeneration
      await root.ingress.project(generation, owner)
      return boundTemplate(generation, owner, uriTemplate)
    },
    log,
  }
}

/** `completion/complete`'s params as the SDK hands them over. */
export interface CompletionRequest {
  ref: { type: string; name?: string; uri?: string }
  argument?: { name?: string; value?: string }
}

const none = (): CompletionAnswer => ({ completion: { values: [], hasMore: false } })

/**
 * Answers `completion/complete`:
 * - `ref/prompt`: the skill argument's declared `values` that start with the typed value (case-insensitive);
 * - `ref/resource`: what the template's completer of that parameter returns, within `COMPLETER_TIMEOUT_MS`;
 * - either, for an argument with nothing to offer (or a completer that throws or is late): no values;
 * - an unknown prompt or template: `-32602`.
 * Every answer carries at most `MAX_COMPLETIONS` values, with `total` and `hasMore` for the rest.
 */
export async function answerCompletion(request: CompletionRequest, source: CompletionSource, signal: AbortSignal): Promise<CompletionAnswer> {
  const { ref } = request
  const name = typeof request.argument?.name === 'string' ? request.argument.name : ''
  const typed = typeof request.argument?.value === 'string' ? request.argument.value : ''
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
    const skill = (await source.skills()).get(ref.name)
    if (skill === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${scrubValues(ref.name)}`)
    const declared = skill.arguments?.find((a) => a.name === name)?.values ?? []
    const prefix = typed.toLowerCase()
    return capped(declared.filter((v) => typeof v === 'string' && v.toLowerCase().startsWith(prefix)))
  }
  if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
    const template = await source.template(ref.uri)
    if (template !== undefined) return template.complete ? offered(template, name, typed, source, signal) : none()
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Nothing to complete for ${scrubValues(ref.uri ?? ref.type)}: no such prompt or resource template is served`)
}

/** Runs the template's completer under the deadline; anything but a list of strings in time answers none. */
async function offered(template: ResourceBinding, param: string, typed: string, source: CompletionSource, signal: AbortSignal): Promise<CompletionAnswer> {
  const where = `completion of {${scrubValues(param)}} on ${scrubValues(template.capability.uri)}`
  let answer: unknown
  try {
    answer = await untilDue(
      Promise.resolve().then(() => template.complete!(param, typed)),
      signal,
      COMPLETER_TIMEOUT_MS,
    )
  } catch (error) {
    // The message may quote what was typed: it is cut out before the line is redacted.
    const message = typed === '' ? messageOf(error) : messageOf(error).split(typed).join('…')
    source.log(`${where} failed: ${redactText(message)}`)
    return none()
  }
  if (answer === TIMED_OUT) {
    source.log(`${where} took longer than ${COMPLETER_TIMEOUT_MS} ms: answered with no values`)
    return none()
  }
  if (!Array.isArray(answer)) {
    // ABORTED (the client went away) lands here too, and is not worth a line.
    if (typeof answer !== 'symbol') source.log(`${where} returned something other than a list of strings: answered with no values`)
    return none()
  }
  return capped(answer.filter((v): v is string => typeof v === 'string'))
}

function capped(values: readonly string[]): CompletionAnswer {
  if (values.length === 0) return none()
  return { completion: { values: values.slice(0, MAX_COMPLETIONS), total: values.length, hasMore: values.length > MAX_COMPLETIONS } }
}

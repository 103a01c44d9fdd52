import { type GetPromptResult, ProtocolError, ProtocolErrorCode, type PromptMessage } from '@modelcontextprotocol/server'
import { messageOf } from '../../errors.js'
import { redactText, scrubValues } from '../../runtime/base/redact.js'
import type { Generation } from '../../runtime/generations/generation.js'
import { readResource } from '../../runtime/generations/resource-read.js'
import type { SkillCapability } from '../../seams/capabilities.js'
import type { ResourceContents } from '../../seams/resources.js'

/**
 * A skill as `prompts/get` answers it: its declared arguments checked (a missing required one, or
 * one it does not declare, is `-32602`), `{{name}}` replaced in the instructions and in the URIs
 * it embeds, then each embedded resource (an image as image content, anything else as an
 * embedded resource) followed by the text.
 */
export async function promptOf(skill: SkillCapability, args: Record<string, string> | undefined, generation: Generation, owner: string, signal: AbortSignal): Promise<GetPromptResult> {
  const given = args ?? {}
  const declared = skill.arguments ?? []
  const missing = declared.filter((a) => a.required === true && typeof given[a.name] !== 'string').map((a) => a.name)
  if (missing.length > 0) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Missing required argument${missing.length > 1 ? 's' : ''} for prompt ${scrubValues(skill.name)}: ${missing.join(', ')}`)
  }
  refuseUndeclared(skill, given)
  const fill = (text: string) => text.replace(/\{\{\s*([A-Za-z0-9_-]+)\s*\}\}/g, (whole, name: string) => (declared.some((a) => a.name === name) ? (given[name] ?? '') : whole))
  const messages: PromptMessage[] = []
  for (const entry of skill.resources ?? []) {
    const target = fill(entry)
    // An entry that is only an optional argument left out embeds nothing.
    if (target.trim() === '') continue
    const contents = await embedded(target, generation, owner, signal)
    for (const c of contents) messages.push({ role: 'user', content: toContent(c) })
  }
  messages.push({ role: 'user', content: { type: 'text', text: fill(skill.instructions) } })
  return { description: skill.description, messages }
}

/** An argument the skill does not declare is `-32602`. */
export function refuseUndeclared(skill: SkillCapability, given: Record<string, string>): void {
  const declared = skill.arguments ?? []
  const unknown = Object.keys(given).filter((name) => !declared.some((a) => a.name === name))
  if (unknown.length > 0) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${scrubValues(skill.name)} has no argument ${unknown.map((n) => JSON.stringify(scrubValues(n))).join(', ')}`)
  }
}

async function embedded(entry: string, generation: Generation, owner: string, signal: AbortSignal): Promise<ResourceContents[]> {
  let read: ResourceContents[] | undefined
  try {
    if (entry.startsWith('file:')) {
      // A path a skill file named: the resource file of this generation at that path.
      const slot = generation.resources.find((r) => r.id.endsWith(`#${entry.slice('file:'.length)}`))
      read = slot ? await slot.read(slot.uri, {}, signal) : undefined
    } else {
      read = (await readResource(generation, owner, entry, signal))?.contents
    }
  } catch (error) {
    throw new ProtocolError(ProtocolErrorCode.InternalError, `the prompt's resource ${scrubValues(entry)} could not be read: ${redactText(messageOf(error))}`)
  }
  if (read === undefined) {
    const what = entry.startsWith('file:') ? 'file (it must lie under agent/resources/)' : 'resource'
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `The prompt embeds the ${what} ${scrubValues(entry)}, which this server does not serve`)
  }
  return read
}

function toContent(c: ResourceContents): PromptMessage['content'] {
  if ('blob' in c && c.mimeType?.startsWith('image/') && c.mimeType !== 'image/svg+xml') return { type: 'image', data: c.blob, mimeType: c.mimeType }
  return { type: 'resource', resource: c }
}

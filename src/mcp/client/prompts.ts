// A mounted server's prompts as `McpToolService` serves them (a `SkillService`): each prompt that
// needs no argument is a skill, its instructions the text of its messages.

import type { McpConnection } from './connection.js'
import { remoteName, TOOL_NAME } from './schema-mapping.js'

/** The prompts of `prompts/list` that read as skills, named `<prefix>__<name>` under a prefix. */
export async function promptCatalog(connection: McpConnection, serverId: string, prefix: string | undefined): Promise<{ name: string; description: string }[]> {
  const prompts = (await connection.listPrompts()) as { name?: unknown; description?: unknown; arguments?: { required?: boolean }[] }[]
  // A prompt that needs arguments cannot be read as fixed instructions.
  return prompts
    .filter((p) => typeof p?.name === 'string' && TOOL_NAME.test(p.name) && !(p.arguments ?? []).some((a) => a?.required === true))
    .map((p) => ({ name: prefix ? `${prefix}__${p.name as string}` : (p.name as string), description: typeof p.description === 'string' ? p.description : `Prompt ${p.name as string} of MCP server "${serverId}".` }))
}

/** The instructions of the skill `skillId`: its prompt's text messages (`prompts/get`), blank lines between. */
export async function promptInstructions(connection: McpConnection, skillId: string, prefix: string | undefined, timeoutMs: number): Promise<string> {
  const remote = remoteName(skillId, prefix) ?? skillId
  const { messages } = await connection.getPrompt(remote, { timeout: timeoutMs })
  return messages
    .map((m) => (m.content.type === 'text' ? m.content.text : m.content.type === 'resource' && 'text' in m.content.resource ? m.content.resource.text : ''))
    .filter((text) => text !== '')
    .join('\n\n')
}

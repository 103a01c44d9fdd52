import { toolFingerprint } from '../../features/schema.js'
import type { JsonSchema, ToolExecutionResult, ToolService } from '../../seams/types.js'
// Type only: the capability shapes are CapabilityIngress's; this file makes one built-in tool of them.
import type { SkillCapability, ToolCapability } from '../../seams/capabilities.js'

/** The name of the built-in tool that loads a skill's instructions (progressive disclosure). */
export const LOAD_SKILL = 'load_skill'
/** The `source` of the built-in tool, as catalogs and the journal show it. */
export const LOAD_SKILL_SOURCE = 'builtin:load_skill'

const DESCRIPTION =
  "Load a skill's full instructions by name (the skills are listed in the system prompt). Call it before you follow a skill whose instructions you have not read in this conversation."

/**
 * The built-in `load_skill` tool of one owner's projection: a tool service over the skills that
 * projection holds, so a turn loads the instructions of the generation it is leased on. It runs as
 * a seam tool, through the whole pipeline (arguments, hooks, approval `never`, journal).
 */
export function loadSkillTool(skills: readonly SkillCapability[], owner: string): { capability: ToolCapability; service: ToolService } {
  const byName = new Map(skills.map((skill) => [skill.name, skill]))
  const names = [...byName.keys()]
  const parameters: JsonSchema = Object.freeze({
    type: 'object',
    properties: Object.freeze({ name: Object.freeze({ type: 'string', enum: Object.freeze(names), description: 'The skill to load.' }) }),
    required: Object.freeze(['name']),
    additionalProperties: false,
  }) as JsonSchema
  const capability: ToolCapability = Object.freeze({
    name: LOAD_SKILL,
    description: DESCRIPTION,
    parameters,
    source: LOAD_SKILL_SOURCE,
    owner,
    kind: 'seam',
    approval: 'never',
    permissions: Object.freeze([]),
    platforms: Object.freeze([]),
    scopes: Object.freeze([]),
    annotations: Object.freeze({ readOnlyHint: true, idempotentHint: true, openWorldHint: false }),
    concurrencySafe: true,
    fingerprint: toolFingerprint(LOAD_SKILL, DESCRIPTION, parameters),
  })
  const service: ToolService = {
    id: LOAD_SKILL_SOURCE,
    description: "The runtime's built-in skill loader.",
    schema: () => [],
    async execute(_scope, _tool, input): Promise<ToolExecutionResult> {
      const name = (input as { name?: unknown } | null)?.name
      const skill = typeof name === 'string' ? byName.get(name) : undefined
      if (skill === undefined) return { success: false, error: `There is no skill named ${JSON.stringify(name)}; the skills are: ${names.join(', ')}.` }
      return {
        success: true,
        output: { name: skill.name, instructions: skill.instructions, tools: [...skill.tools] },
        content: [{ type: 'text', text: skillText(skill) }],
      }
    },
  }
  return { capability, service }
}

/** What the model reads when it loads a skill: its instructions, then the tools it names (advisory). */
export function skillText(skill: SkillCapability): string {
  const lines = [`# Skill: ${skill.name}`, '', skill.instructions.trim()]
  if (skill.tools.length > 0) lines.push('', `Tools this skill uses: ${skill.tools.join(', ')}.`)
  return lines.join('\n')
}

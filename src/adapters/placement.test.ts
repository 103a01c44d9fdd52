import { describe, expect, it } from 'vitest'
import type { AgentCapabilities } from '../seams/capabilities.js'
import { blockText, contextText, skillInstructions } from './placement.js'

const skill = (name: string, always: boolean) => ({ name, description: `${name} skill.`, instructions: `# ${name}\nDo ${name}.`, source: `agent/skills/${name}.md`, owner: 'root', tools: [], always })

describe('the placement rule', () => {
  it('lists every skill and includes the instructions of always-on and requested ones only', () => {
    const capabilities = { generation: 1, owner: 'root', tools: [], skills: [skill('triage', true), skill('deploy', false), skill('audit', false)], resources: [] } as AgentCapabilities
    expect(skillInstructions(capabilities, { include: ['audit'] })).toBe(
      [
        'Skills available in this session:',
        '- triage: triage skill.',
        '- deploy: deploy skill.',
        '- audit: audit skill.',
        '',
        '## Skill: triage',
        '',
        '# triage\nDo triage.',
        '',
        '## Skill: audit',
        '',
        '# audit\nDo audit.',
      ].join('\n'),
    )
    expect(skillInstructions({ ...capabilities, skills: [] })).toBeUndefined()
  })

  it('names the tools a skill lists, and points the model at the built-in load_skill when the turn offers it', () => {
    const notes = { ...skill('notes', false), tools: ['add_note', 'list_notes'] }
    const builtin = { name: 'load_skill', source: 'builtin:load_skill' }
    const capabilities = { generation: 1, owner: 'root', tools: [builtin], skills: [notes] } as unknown as AgentCapabilities
    expect(skillInstructions(capabilities)).toBe(
      [
        'Skills available in this session:',
        '- notes: notes skill. (tools: add_note, list_notes)',
        '',
        'Before you follow a skill, load its instructions with the load_skill tool (unless they are below).',
      ].join('\n'),
    )
    // A plugin's own tool of that name may do anything: the prompt does not send the model to it.
    const own = { ...capabilities, tools: [{ name: 'load_skill', source: 'tools/load_skill.ts' }] } as unknown as AgentCapabilities
    expect(skillInstructions(own)).toBe(['Skills available in this session:', '- notes: notes skill. (tools: add_note, list_notes)'].join('\n'))
  })

  it('wraps a deferred context with its id and role, escaping the id', () => {
    expect(contextText({ id: 'a"<b', role: 'system', content: 'Be brief.' })).toBe('<context id="a&quot;&lt;b" role="system">\nBe brief.\n</context>')
  })

  it('turns blocks a text-only place cannot hold into text that says what they were', () => {
    expect(blockText({ type: 'resource', resource: { uri: 'file:///a.md', text: '# A' } })).toBe('Resource file:///a.md:\n# A')
    expect(blockText({ type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAA', mimeType: 'application/zip' } })).toBe('[resource file:///a.bin application/zip content not shown]')
    expect(blockText({ type: 'resource_link', uri: 'file:///b.md', name: 'b.md', description: 'Notes' })).toBe('[resource b.md: file:///b.md (Notes)]')
    expect(blockText({ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' })).toBe('[audio audio/wav content not shown]')
  })
})

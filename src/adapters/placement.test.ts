import { describe, expect, it } from 'vitest'
import type { AgentCapabilities } from '../runtime/capability-ingress.js'
import { blockText, contextText, skillInstructions } from './placement.js'

const skill = (name: string, always: boolean) => ({ name, description: `${name} skill.`, instructions: `# ${name}\nDo ${name}.`, source: `agent/skills/${name}.md`, owner: 'root', tools: [], always })

describe('the placement rule', () => {
  it('lists every skill and includes the instructions of always-on and requested ones only', () => {
    const capabilities = { generation: 1, owner: 'root', tools: [], skills: [skill('triage', true), skill('deploy', false), skill('audit', false)] } as AgentCapabilities
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

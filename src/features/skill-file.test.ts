import { describe, expect, it } from 'vitest'
import { SeamError } from '../errors.js'
import { MAX_FRONT_MATTER, parseSkillFile } from './skill-file.js'

const FILE = '/plugin/agent/skills/triage.md'
const options = { relativeTo: '/plugin' }

function failure(text: string, file = FILE): SeamError {
  try {
    parseSkillFile(file, text, options)
  } catch (error) {
    if (error instanceof SeamError) return error
    throw error
  }
  throw new Error('expected INVALID_SKILL')
}

describe('parseSkillFile', () => {
  it('reads name, description, tools and always from the front matter and keeps the body as instructions', () => {
    const text = `---
name: ticket-triage
description: Sort new tickets by urgency.
tools: [lookup_ticket, assign]
always: true
owner: ignored
---
# Triage

Read each ticket, then assign it.
`
    expect(parseSkillFile(FILE, text)).toEqual({
      name: 'ticket-triage',
      description: 'Sort new tickets by urgency.',
      instructions: '# Triage\n\nRead each ticket, then assign it.',
      tools: ['lookup_ticket', 'assign'],
      always: true,
      // Where each entry is, for a warning when the generation has no such tool.
      toolsAt: [
        { name: 'lookup_ticket', file: FILE, line: 4, column: 9, frame: expect.stringContaining('> 4 | tools: [lookup_ticket, assign]\n    |         ^') },
        { name: 'assign', file: FILE, line: 4, column: 24, frame: expect.stringContaining('|                        ^') },
      ],
    })
  })

  it('defaults the name to the file stem and the description to the first heading outside code', () => {
    const text = '```md\n# not this\n```\n\n## Triage new tickets ##\n\nSteps.\n'
    expect(parseSkillFile(FILE, text)).toEqual({
      name: 'triage',
      description: 'Triage new tickets',
      instructions: text.trim(),
    })
  })

  it('refuses a skill with no description at all', () => {
    const error = failure('Just steps, no heading.\n')
    expect(error.code).toBe('INVALID_SKILL')
    expect(error.message).toBe(
      'agent/skills/triage.md: has no description: add `description:` to the front matter or start the body with a # heading',
    )
  })

  it('reports malformed YAML at its line and column in the file, with a frame', () => {
    const error = failure('---\ndescription: ok\ntools: [a, b\nalways: true\n---\nbody\n')
    expect(error.code).toBe('INVALID_SKILL')
    expect(error.details).toMatchObject({ file: FILE, line: 4, column: 1 })
    expect(error.message).toMatch(/^agent\/skills\/triage\.md:4:1: malformed front matter: /)
    expect(error.details?.frame).toContain('> 4 | always: true')
  })

  it('never runs a !!js/function tag or any other custom tag, and says where it is', () => {
    const evil = failure('---\ndescription: x\nname: !!js/function "function () { process.exit(1) }"\n---\n')
    expect(evil.message).toMatch(/^agent\/skills\/triage\.md:3:7: the tag tag:yaml\.org,2002:js\/function is not allowed/)
    expect(failure('---\ndescription: !!binary aGk=\n---\n').details).toMatchObject({ line: 2, column: 14 })
    expect(failure('---\ndescription: !local x\n---\n').code).toBe('INVALID_SKILL')
  })

  it('checks the type of each known key and points at its value', () => {
    expect(failure('---\ndescription: x\nalways: "yes"\n---\n').message).toBe(
      'agent/skills/triage.md:3:9: `always` must be true or false',
    )
    expect(failure('---\ndescription: x\ntools: lookup\n---\n').message).toContain('`tools` must be a list of tool names')
    expect(failure('---\ndescription: 3\n---\n').message).toContain('`description` must be a non-empty string')
    expect(failure('---\n- a\n---\n').message).toContain('the front matter must be a mapping')
    expect(failure('---\ndescription: x\ndescription: y\n---\n').details).toMatchObject({ line: 3 })
  })

  it('refuses names that are not skill names, from the file or the front matter', () => {
    expect(failure('# Hi\n', '/plugin/agent/skills/Triage Notes.md').message).toContain('got "Triage Notes"')
    expect(failure('---\nname: Bad Name\n---\n# Hi\n').message).toContain('got "Bad Name"')
  })

  it('refuses front matter that is never closed, and treats a later --- as Markdown', () => {
    expect(failure('---\ndescription: x\n').message).toContain('never closed')
    const text = '# Title\n\n---\n\nmore\n'
    expect(parseSkillFile(FILE, text).instructions).toBe(text.trim())
  })

  it('accepts empty front matter, CRLF line ends and a byte order mark', () => {
    expect(parseSkillFile(FILE, '---\n---\n# Hi\n').description).toBe('Hi')
    expect(parseSkillFile(FILE, '\uFEFF---\r\ndescription: Win\r\n---\r\nbody\r\n')).toEqual({
      name: 'triage',
      description: 'Win',
      instructions: 'body',
    })
  })

  it('refuses alias bombs', () => {
    const bomb = `---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ndescription: x\n---\n`
    expect(failure(bomb).message).toContain('malformed front matter')
  })

  it('refuses 5 MB of front matter at once with its size limit, without parsing it', () => {
    const keys = Array.from({ length: 400_000 }, (_, i) => `k${i}: v`).join('\n')
    const started = performance.now()
    const error = failure(`---\n${keys}\ndescription: x\n---\n`)
    // Parsing it took 11 minutes; 2 s only allows for a loaded machine.
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(error.message).toMatch(new RegExp(`front matter is \\d+ characters long; at most ${MAX_FRONT_MATTER} are allowed`))
  })

  it('parses a thousand keys (duplicates found in one pass) and still refuses a repeated key, with its line', () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => `k${i}: v`).join('\n')
    expect(parseSkillFile(FILE, `---\n${keys}\ndescription: Many keys.\n---\n`).description).toBe('Many keys.')
    const error = failure(`---\ndescription: one\nname: a\ndescription: two\n---\n`)
    expect(error.message).toContain('`description` is repeated')
    expect(error.details?.line).toBe(4)
  })

  it('reads an argument\'s ask: as a message or as { message, key, title, description }, as data', () => {
    const text = `---
description: Triage.
arguments:
  - name: ticket
    required: true
    ask: Which ticket?
  - name: context
    ask: { message: '  What context?  ', key: user_context, title: Context, description: A line or two }
  - name: doc
---
Triage {{ticket}}.
`
    expect(parseSkillFile(FILE, text).arguments).toEqual([
      { name: 'ticket', required: true, ask: { message: 'Which ticket?' } },
      { name: 'context', ask: { message: 'What context?', key: 'user_context', title: 'Context', description: 'A line or two' } },
      { name: 'doc' },
    ])
  })

  it('refuses an ask: that is not a message or a known mapping, and two asks under one key, at the arguments list', () => {
    const bad = (ask: string) => failure(`---\ndescription: x\narguments:\n  - name: a\n    ask: ${ask}\n---\n`)
    expect(bad('""').message).toBe('agent/skills/triage.md:4:3: `arguments` must be a list whose `ask:` entries are a message or { message, key?, title?, description? } (the ask of "a" is not)')
    expect(bad('{ message: Hi, run: "process.exit(1)" }').message).toContain('the ask of "a" is not')
    expect(bad('{ message: Hi, key: "two words" }').message).toContain('the ask of "a" is not')
    expect(bad('[Hi]').message).toContain('the ask of "a" is not')
    expect(bad(`"${'x'.repeat(1001)}"`).message).toContain('the ask of "a" is not')
    const twice = failure('---\ndescription: x\narguments:\n  - name: a\n    ask: A?\n  - name: b\n    ask: { message: B?, key: a }\n---\n')
    expect(twice.message).toContain('a list whose asks have distinct keys ("a" is asked twice)')
  })

  it('reads an argument\'s values: as a list of strings, as data', () => {
    const skill = parseSkillFile(FILE, '---\ndescription: x\narguments:\n  - name: tone\n    values: [dry, warm, "formal: very"]\n  - name: other\n---\n', options)
    expect(skill.arguments).toEqual([{ name: 'tone', values: ['dry', 'warm', 'formal: very'] }, { name: 'other' }])
  })

  it('refuses values: that are not a short list of distinct short strings, at the values line', () => {
    const bad = (values: string) => failure(`---\ndescription: x\narguments:\n  - name: a\n  - name: tone\n    values: ${values}\n---\n`)
    const shape = 'must be a list of at most 100 distinct non-empty strings of at most 200 characters'
    expect(bad('dry').message).toBe(`agent/skills/triage.md:6:13: the \`values:\` of argument "tone" ${shape}`)
    expect(bad('dry').details).toMatchObject({ line: 6, column: 13 })
    expect(bad('[dry, 3]').message).toContain(shape)
    expect(bad('[dry, { run: x }]').message).toContain(shape)
    expect(bad('[dry, ""]').message).toContain(shape)
    expect(bad('[dry, dry]').message).toContain(shape)
    expect(bad(`["${'x'.repeat(201)}"]`).message).toContain(shape)
    expect(bad(`[${Array.from({ length: 101 }, (_, i) => `v${i}`).join(', ')}]`).message).toContain(shape)
    expect(parseSkillFile(FILE, `---\ndescription: x\narguments:\n  - name: a\n    values: [${Array.from({ length: 100 }, (_, i) => `v${i}`).join(', ')}]\n---\n`, options).arguments?.[0]?.values).toHaveLength(100)
  })
})

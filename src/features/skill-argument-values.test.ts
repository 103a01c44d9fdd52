import { describe, expect, it } from 'vitest'
import { defineSkill } from './define-tool.js'

describe('a skill argument\'s values in code', () => {
  it('keeps a short list of distinct strings as declared', () => {
    const skill = defineSkill({ description: 'Reply.', instructions: 'Reply {{tone}}.', arguments: [{ name: 'tone', values: ['dry', 'warm'] }] })
    expect(skill.arguments?.[0]?.values).toEqual(['dry', 'warm'])
  })

  it('refuses values that are not a list of at most 100 distinct short strings with INVALID_SKILL', () => {
    const refused = (values: unknown) => () => defineSkill({ description: 'Reply.', instructions: '', arguments: [{ name: 'tone', values: values as string[] }] })
    const shape = 'defineSkill: the `values` of argument "tone" must be a list of at most 100 distinct non-empty strings of at most 200 characters'
    expect(refused('dry')).toThrow(expect.objectContaining({ code: 'INVALID_SKILL', message: shape }))
    expect(refused(Array.from({ length: 101 }, (_, i) => `v${i}`))).toThrow(shape)
    expect(refused(['x'.repeat(201)])).toThrow(shape)
    expect(refused(['dry', 'dry'])).toThrow(shape)
    expect(refused([1])).toThrow(shape)
  })
})

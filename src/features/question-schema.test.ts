import { describe, expect, it } from 'vitest'
import { STRING_FORMATS } from '../seams/questions.js'
import { checkQuestion } from './question-schema.js'

const asking = (format: string) => ({ message: 'When?', schema: { type: 'object', properties: { at: { type: 'string', format } } } })

describe('checkQuestion: string formats', () => {
  it('takes every format STRING_FORMATS lists and refuses another as INVALID_QUESTION', () => {
    for (const format of STRING_FORMATS) expect(() => checkQuestion(asking(format))).not.toThrow()
    expect(() => checkQuestion(asking('time'))).toThrow(expect.objectContaining({ code: 'INVALID_QUESTION', message: 'ctx.ask() `schema.properties.at` has a `format` MCP does not allow' }))
  })
})

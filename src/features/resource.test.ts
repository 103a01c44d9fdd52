import { describe, expect, it } from 'vitest'
import { defineResource } from './resource.js'

const read = () => 'x'

describe('defineResource', () => {
  it('keeps a template\'s completers, one function per parameter', () => {
    const color = (value: string) => [value]
    expect(defineResource('paint://{color}/{shade}', { read, complete: { color } }).complete).toEqual({ color })
  })

  it('refuses a completer that is not a function, or that names no parameter of the template, with INVALID_PLUGIN', () => {
    expect(() => defineResource('paint://{color}', { read, complete: { color: 'red' as never } })).toThrow(expect.objectContaining({ code: 'INVALID_PLUGIN', message: 'addResource("paint://{color}"): `complete.color` must be a function' }))
    expect(() => defineResource('paint://{color}', { read, complete: { shade: () => [] } })).toThrow(expect.objectContaining({ code: 'INVALID_PLUGIN', message: 'addResource("paint://{color}"): `complete.shade` is not a parameter of the template ({color})' }))
    expect(() => defineResource('paint://all', { read, complete: { color: () => [] } })).toThrow(/is not a parameter of the template \(it has none\)/)
    expect(() => defineResource('paint://{color}', { read, complete: [] as never })).toThrow(/`complete` must be an object of functions/)
  })
})

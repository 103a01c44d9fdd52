import { describe, expect, it } from 'vitest'
import { beginTurn, expectPaired, rootWith } from '../../../test/kit.js'
import { READ_RESOURCE } from './read-resource.js'

describe('the built-in read_resource tool', () => {
  it('reads a resource and a template in a turn, each call journaled as a pair', async () => {
    const { root, journal } = await rootWith((ctx) => {
      ctx.addResource('notes://index', { description: 'Every note.', read: () => 'a, b' })
      ctx.addResource('notes://{id}', { mimeType: 'text/plain', read: ({ id }) => `note ${id}` })
      ctx.addResource('img://dot', { mimeType: 'image/png', read: () => new Uint8Array([0x89, 0x50, 0x4e, 0x47]) })
    })
    const turn = await beginTurn(root)
    expect(turn.capabilities.resources.map((r) => [r.uri, r.template])).toEqual([
      ['notes://index', false],
      ['notes://{id}', true],
      ['img://dot', false],
    ])
    const tool = turn.capabilities.tools.find((t) => t.name === READ_RESOURCE)!
    expect(tool.description).toContain('- notes://index: Every note.')
    expect(tool.description).toContain('- notes://{id} (template)')

    const index = await turn.tools.execute({ callId: 'r1', name: READ_RESOURCE, arguments: { uri: 'notes://index' } })
    expect(index).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'a, b' }] })
    const note = await turn.tools.execute({ callId: 'r2', name: READ_RESOURCE, arguments: { uri: 'notes://a%20b' } })
    expect(note).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'note a b' }] })
    const image = await turn.tools.execute({ callId: 'r3', name: READ_RESOURCE, arguments: { uri: 'img://dot' } })
    expect(image).toMatchObject({ status: 'completed', content: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw==' }] })
    const missing = await turn.tools.execute({ callId: 'r4', name: READ_RESOURCE, arguments: { uri: 'notes://a/b' } })
    expect(missing).toMatchObject({ status: 'failed' })
    await turn.end()

    await expectPaired(journal, turn.turnId)
    const calls = (await journal.read(turn.turnId)).filter((e) => e.kind === 'tool/call').map((e) => (e as { callId: string }).callId)
    expect(calls).toEqual(['r1', 'r2', 'r3', 'r4'])
  })

  it('is offered only when the turn has resources', async () => {
    const { root } = await rootWith((ctx) => {
      ctx.addSkill('notes', { description: 'Notes.', instructions: 'Take notes.', always: true })
    })
    const capabilities = await root.capabilities()
    expect(capabilities.resources).toEqual([])
    expect(capabilities.tools.map((t) => t.name)).not.toContain(READ_RESOURCE)
  })

  it('refuses a URI a plugin adds twice', async () => {
    await expect(
      rootWith((ctx) => {
        ctx.addResource('notes://x', { read: () => 'x' })
        ctx.addResource('notes://x', { read: () => 'y' })
      }),
    ).rejects.toThrow(/resource "notes:\/\/x" is added twice/)
  })
})

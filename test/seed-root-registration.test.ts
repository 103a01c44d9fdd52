import { describe, expect, it, onTestFinished } from 'vitest'
import { capabilitySeamToken, createRoot, memoryJournal } from 'seam-runtime'
import plugin from './fixtures/seed/plugin.js'
import { searchCalls } from './fixtures/seed/search-service.js'

const grantAll = { check: () => true }

describe('seed 004: Root registration and lifecycle', () => {
  it('projects the seed providers and runs acme_search through the pipeline', async () => {
    const journal = memoryJournal()
    const root = await createRoot({ plugin, journal, permissions: grantAll })
    onTestFinished(() => root.close())
    const turn = await root.beginTurn({ session: 's1', principal: { subjectId: 'u1', roles: [] } })
    const tool = turn.capabilities.tools.find((t) => t.name === 'acme_search')
    expect(tool).toMatchObject({ source: 'remote:acme', approval: 'never', permissions: ['authenticated'], kind: 'seam' })
    expect(turn.capabilities.skills).toEqual([
      expect.objectContaining({ name: 'acme_research', instructions: '# Acme research\nUse acme_search, cite source IDs, then summarize.' }),
    ])
    const before = searchCalls.length
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'acme_search', arguments: '{"query":"password"}' })
    expect(outcome.status).toBe('completed')
    expect(outcome.value).toEqual({ hits: [{ id: 'KB-7', title: 'Reset a password' }] })
    expect(searchCalls.length).toBe(before + 1)
    await turn.end()
    const kinds = (await journal.read(turn.turnId)).map((e) => e.kind)
    expect(kinds).toEqual(['turn/begin', 'tool/call', 'tool/result', 'turn/end'])
  })

  it('hides the permission-gated tool when no PermissionHost grants it', async () => {
    const root = await createRoot({ plugin })
    onTestFinished(() => root.close())
    const turn = await root.beginTurn({ session: 's1', principal: { subjectId: 'u1', roles: [] } })
    // Only the built-in skill loader (the seed has a remote skill) is left.
    expect(turn.capabilities.tools.map((t) => t.name)).toEqual(['load_skill'])
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'acme_search', arguments: '{"query":"x"}' })
    expect(outcome.code).toBe('UNKNOWN_TOOL')
    await turn.end()
  })

  it('disposes the SeamIntegration with the root scope', async () => {
    const root = await createRoot({ plugin, permissions: grantAll })
    const seams = root.activeGeneration.root.resources.get(capabilitySeamToken)
    expect(seams?.tools.size).toBe(1)
    await root.close()
    expect(seams?.disposed).toBe(true)
    expect(seams?.tools.size).toBe(0)
  })
})

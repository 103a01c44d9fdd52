import { describe, expect, it } from 'vitest'
import { capabilitySeamToken, McpToolService, SeamIntegration } from 'seam-runtime'
import { everythingTransport } from '../src/mcp/fixtures/test-helpers.js'
import { READ_RESOURCE } from '../src/runtime/generations/read-resource.js'
import { beginTurn, expectPaired, rootWith } from './kit.js'

describe("a mounted MCP server's resources and prompts", () => {
  it('projects the reference server resources and templates, reads them in a turn, and its prompts as skills', async () => {
    const { root, journal } = await rootWith((ctx) => {
      const service = new McpToolService({ id: 'everything', transport: everythingTransport() })
      ctx.effect(() => service.dispose(), 'mcp everything')
      const seams = new SeamIntegration()
      seams.registerToolService('global', service)
      seams.registerResourceService('global', service)
      seams.registerSkillService('global', service)
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    })
    const capabilities = await root.capabilities()
    const plain = capabilities.resources.filter((r) => !r.template)
    const templates = capabilities.resources.filter((r) => r.template)
    expect(plain.length).toBeGreaterThan(0)
    expect(templates.length).toBeGreaterThan(0)
    expect(capabilities.resources.every((r) => r.source === 'seam:everything' && r.kind === 'seam')).toBe(true)
    expect(capabilities.skills.map((s) => s.name)).toContain('simple-prompt')
    expect(capabilities.skills.find((s) => s.name === 'simple-prompt')!.instructions).not.toBe('')

    const text = plain.find((r) => r.mimeType?.startsWith('text/'))!
    const turn = await beginTurn(root)
    const read = await turn.tools.execute({ callId: 'm1', name: READ_RESOURCE, arguments: { uri: text.uri } })
    expect(read).toMatchObject({ status: 'completed', content: [{ type: 'text', text: expect.any(String) }] })
    // A blob through one of the server's templates: the URI it matches is read from the server.
    expect(templates.map((t) => t.uri)).toContain('demo://resource/dynamic/blob/{resourceId}')
    const bytes = await turn.tools.execute({ callId: 'm2', name: READ_RESOURCE, arguments: { uri: 'demo://resource/dynamic/blob/7' } })
    expect(bytes).toMatchObject({ status: 'completed', content: [{ type: 'resource', resource: { uri: 'demo://resource/dynamic/blob/7', blob: expect.any(String) } }] })
    const decoded = Buffer.from((bytes.content[0] as { resource: { blob: string } }).resource.blob, 'base64').toString()
    expect(decoded).toContain('Resource 7')
    await turn.end()
    await expectPaired(journal, turn.turnId)
  })
})
